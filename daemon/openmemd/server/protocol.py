"""The wire protocol: one JSON object per message, validated here and nowhere else.

`parse_request(body)` turns the bytes of a request into one of the typed request records or
raises `ProtocolError(code, message)`; `encode_reply` / `error_reply` build the replies.

Requests: ``{"op": "ping|status|search|get|sync|dream|add", "agent": "main", ...}``.
Replies:  ``{"ok": true, ...}`` or ``{"ok": false, "error": {"code": ..., "message": ...}}``.

Unknown *ops* are rejected (a typo must not look like success). Unknown *fields* are
tolerated, so that a newer client can talk to an older daemon; only the fields documented for
an op are read. A request may carry an ``"id"`` (string or integer), echoed in the reply for
clients that pipeline over DEALER sockets.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from openmemd.config import DEFAULT_AGENT, SOURCES

MAX_QUERY_BYTES = 4096
MAX_PATH_BYTES = 4096
OPS = ("ping", "status", "search", "get", "sync", "dream", "add")
PHASES = ("light", "rem", "deep", "all")
ERROR_CODES = ("bad_request", "not_found", "forbidden", "unavailable", "internal")
_AGENT_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ProtocolError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class PingRequest:
    agent: str = DEFAULT_AGENT


@dataclass(frozen=True)
class StatusRequest:
    agent: str | None = None  # None: every agent
    deep: bool = False


@dataclass(frozen=True)
class SearchRequest:
    query: str
    agent: str = DEFAULT_AGENT
    max_results: int | None = None
    min_score: float | None = None
    sources: tuple[str, ...] | None = None
    explain: bool = False


@dataclass(frozen=True)
class GetRequest:
    path: str
    agent: str = DEFAULT_AGENT
    from_line: int | None = None
    lines: int | None = None


@dataclass(frozen=True)
class SyncRequest:
    agent: str = DEFAULT_AGENT
    force: bool = False
    wait: bool = True


@dataclass(frozen=True)
class DreamRequest:
    agent: str = DEFAULT_AGENT
    phase: str = "all"
    dry_run: bool = False


@dataclass(frozen=True)
class AddRequest:
    """Append a note (one bullet) to today's memory file or to MEMORY.md."""

    text: str
    target: str = "daily"  # or "long-term"
    agent: str = DEFAULT_AGENT


NOTE_TARGETS = ("daily", "long-term")
MAX_NOTE_BYTES = 4096

Request = (PingRequest | StatusRequest | SearchRequest | GetRequest | SyncRequest
           | DreamRequest | AddRequest)


@dataclass(frozen=True)
class Envelope:
    """A parsed request plus the optional client-chosen id to echo."""

    request: Request
    id: str | int | None = None


# -- parsing ------------------------------------------------------------------------------------

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def decode_json(body: bytes, *, max_bytes: int) -> dict[str, Any]:
    """Bytes -> a JSON object, or ProtocolError("bad_request", why)."""
    if len(body) > max_bytes:
        raise ProtocolError("bad_request",
                            f"request is {len(body)} bytes; the limit is {max_bytes}")
    if not body:
        raise ProtocolError("bad_request", "empty request: send one JSON object")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError("bad_request", f"request is not valid UTF-8 ({exc.reason} at byte "
                                           f"{exc.start})") from None
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ProtocolError("bad_request", "request JSON is nested too deeply") from None
    except ValueError as exc:
        raise ProtocolError("bad_request", f"request is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ProtocolError("bad_request", f"request must be a JSON object, got "
                                           f"{_json_type(data)}")
    return data


def parse_request(body: bytes, *, max_bytes: int = 1024 * 1024) -> Envelope:
    data = decode_json(body, max_bytes=max_bytes)
    req_id = data.get("id")
    if req_id is not None and (isinstance(req_id, bool) or not isinstance(req_id, (str, int))
                               or (isinstance(req_id, str) and len(req_id) > 256)):
        raise ProtocolError("bad_request", "'id' must be a string (≤ 256 chars) or an integer")
    return Envelope(parse_fields(data), req_id)


def parse_fields(data: dict[str, Any]) -> Request:
    op = data.get("op")
    if op is None:
        raise ProtocolError("bad_request", f"missing 'op': one of {', '.join(OPS)}")
    if not isinstance(op, str):
        raise ProtocolError("bad_request", f"'op' must be a string, got {_json_type(op)}")
    if op not in OPS:
        raise ProtocolError("bad_request", f"unknown op {op[:64]!r}: one of {', '.join(OPS)}")
    f = _Fields(data)
    if op == "ping":
        return PingRequest(agent=f.agent())
    if op == "status":
        return StatusRequest(agent=f.agent(required_default=None), deep=f.flag("deep", False))
    if op == "search":
        query = f.text("query", required=True, max_bytes=MAX_QUERY_BYTES)
        if not query.strip():
            raise ProtocolError("bad_request", "'query' must not be empty")
        sources = f.str_list("sources", choices=SOURCES)
        return SearchRequest(query=query, agent=f.agent(),
                             max_results=f.integer("maxResults", lo=1, hi=200),
                             min_score=f.number("minScore", lo=0.0, hi=1.0),
                             sources=sources, explain=f.flag("explain", False))
    if op == "get":
        return GetRequest(path=f.text("path", required=True, max_bytes=MAX_PATH_BYTES),
                          agent=f.agent(), from_line=f.integer("from", lo=1),
                          lines=f.integer("lines", lo=1))
    if op == "sync":
        return SyncRequest(agent=f.agent(), force=f.flag("force", False),
                           wait=f.flag("wait", True))
    if op == "add":
        text = f.text("text", required=True, max_bytes=MAX_NOTE_BYTES)
        if not text.strip():
            raise ProtocolError("bad_request", "'text' must not be empty")
        target = f.text("target") or "daily"
        if target not in NOTE_TARGETS:
            raise ProtocolError("bad_request", f"'target' must be one of {', '.join(NOTE_TARGETS)}"
                                               f"; got {target[:32]!r}")
        return AddRequest(text=text, target=target, agent=f.agent())
    phase = f.text("phase") or "all"
    if phase not in PHASES:
        raise ProtocolError("bad_request", f"'phase' must be one of {', '.join(PHASES)}; "
                                           f"got {phase[:32]!r}")
    return DreamRequest(agent=f.agent(), phase=phase, dry_run=f.flag("dryRun", False))


class _Fields:
    """Typed accessors that raise ProtocolError naming the field."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def agent(self, required_default: str | None = DEFAULT_AGENT) -> Any:
        value = self._data.get("agent")
        if value is None:
            return required_default
        if not isinstance(value, str) or not _AGENT_RE.match(value):
            raise ProtocolError("bad_request", "'agent' must be 1-64 letters, digits, - or _")
        return value

    def text(self, key: str, *, required: bool = False, max_bytes: int = 4096) -> Any:
        value = self._data.get(key)
        if value is None:
            if required:
                raise ProtocolError("bad_request", f"missing '{key}'")
            return None
        if not isinstance(value, str):
            raise ProtocolError("bad_request", f"'{key}' must be a string, got {_json_type(value)}")
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            raise ProtocolError("bad_request", f"'{key}' is {size} bytes; the limit is {max_bytes}")
        if "\x00" in value:
            raise ProtocolError("bad_request", f"'{key}' must not contain NUL characters")
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self._data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ProtocolError("bad_request", f"'{key}' must be true or false, got "
                                               f"{_json_type(value)}")
        return value

    def integer(self, key: str, *, lo: int | None = None, hi: int | None = None) -> int | None:
        value = self._data.get(key)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ProtocolError("bad_request", f"'{key}' must be an integer, got "
                                               f"{_json_type(value)}")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise ProtocolError("bad_request", f"'{key}' = {value} is out of range "
                                               f"[{lo}, {hi if hi is not None else '∞'}]")
        return value

    def number(self, key: str, *, lo: float, hi: float) -> float | None:
        value = self._data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise ProtocolError("bad_request", f"'{key}' must be a number, got {_json_type(value)}")
        if not lo <= value <= hi:
            raise ProtocolError("bad_request", f"'{key}' = {value} is out of range [{lo}, {hi}]")
        return float(value)

    def str_list(self, key: str, *, choices: tuple[str, ...]) -> tuple[str, ...] | None:
        value = self._data.get(key)
        if value is None:
            return None
        if (not isinstance(value, list) or not value
                or not all(isinstance(v, str) and v in choices for v in value)):
            raise ProtocolError("bad_request", f"'{key}' must be a non-empty list of "
                                               f"{', '.join(repr(c) for c in choices)}")
        return tuple(dict.fromkeys(value))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


# -- replies ------------------------------------------------------------------------------------

def encode_reply(payload: dict[str, Any], req_id: str | int | None = None) -> bytes:
    """`payload` must hold "ok"; strict JSON (NaN is an error, surfaced as `internal`)."""
    if req_id is not None:
        payload = {**payload, "id": req_id}
    return json.dumps(payload, ensure_ascii=False, allow_nan=False,
                      separators=(",", ":")).encode("utf-8")


def ok_reply(fields: dict[str, Any] | None = None, req_id: str | int | None = None) -> bytes:
    return encode_reply({"ok": True, **(fields or {})}, req_id)


def error_reply(code: str, message: str, req_id: str | int | None = None) -> bytes:
    if code not in ERROR_CODES:
        code = "internal"
    return encode_reply({"ok": False, "error": {"code": code, "message": message}}, req_id)
