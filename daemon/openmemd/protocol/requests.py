"""The wire protocol: one JSON object per message, validated here at the edge (parameter
values by the rules in `params`, which the command line shares).

`parse_request(body)` turns the bytes of a request into one of the typed request records or
raises `ProtocolError(code, message)`; `encode_reply` / `error_reply` build the replies.

Requests: ``{"op": "ping|status|search|get|sync|dream|add|context|memory|demote|undo|dreams",
"agent": "main", ...}``.
Replies:  ``{"ok": true, ...}`` or ``{"ok": false, "error": {"code": ..., "message": ...}}``.

Unknown *ops* are rejected (a typo must not look like success). Unknown *fields* are
tolerated, so that a newer client can talk to an older daemon; only the fields documented for
an op are read. A request may carry an ``"id"`` (string or integer), echoed in the reply for
clients that pipeline over DEALER sockets. Replies are always encodable: text UTF-8 cannot
carry (a lone surrogate from a ``"\\ud800"`` escape) is sent as JSON escapes.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any, NamedTuple

from openmemd.config import DEFAULT_AGENT
from openmemd.errors import OpenmemdError
from openmemd.protocol import params
from openmemd.protocol.params import MAX_NOTE_BYTES, NOTE_TARGETS

OPS = ("ping", "status", "search", "get", "sync", "dream", "add", "context", "memory", "demote",
       "undo", "dreams")
ERROR_CODES = ("bad_request", "not_found", "forbidden", "unavailable", "internal")


class ProtocolError(OpenmemdError):
    """A request refused at the edge; `code` is one of ERROR_CODES."""

    def __init__(self, code: str, message: str, req_id: str | int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.req_id = req_id


# The requests are NamedTuples, not dataclasses: every command a daemon answers builds one, and
# the dataclass machinery (its import and the code it generates per class) was a fifth of such a
# command's start-up (bench/cli.py).
class PingRequest(NamedTuple):
    """Is a daemon there, and which index does it serve?"""

    agent: str = DEFAULT_AGENT


class StatusRequest(NamedTuple):
    """The health of the daemon and its indexes."""

    agent: str | None = None  # None: every agent
    deep: bool = False


class SearchRequest(NamedTuple):
    """A search of one agent's memory."""

    query: str
    agent: str = DEFAULT_AGENT
    max_results: int | None = None
    min_score: float | None = None
    sources: tuple[str, ...] | None = None
    explain: bool = False
    today: date | None = None  # what "yesterday" counts from (default: the local date)
    project: str | None = None  # an absolute folder: only agent sessions that ran in it


class GetRequest(NamedTuple):
    """Lines of one memory file (or a search hit's citation)."""

    path: str
    agent: str = DEFAULT_AGENT
    from_line: int | None = None
    lines: int | None = None
    # Another searched namespace (PostgreSQL) whose hit to read, from the stored index; None:
    # this agent's own files.
    namespace: str | None = None


class SyncRequest(NamedTuple):
    """Sync an agent's index with its workspace now."""

    agent: str = DEFAULT_AGENT
    force: bool = False
    wait: bool = True


class DreamRequest(NamedTuple):
    """Run dreaming now (or one phase of it)."""

    agent: str = DEFAULT_AGENT
    phase: str = "all"
    dry_run: bool = False


class AddRequest(NamedTuple):
    """Append a note (one bullet) to today's memory file or to MEMORY.md."""

    text: str
    target: str = "daily"  # or "long-term"
    agent: str = DEFAULT_AGENT


class ContextRequest(NamedTuple):
    """The session's startup context (openmemd/context.py); `today` (YYYY-MM-DD) replays a
    day, None = today in the dreaming timezone; `max_chars` fits the whole block within that
    many characters (a host that cuts longer input), None = the budgets alone."""

    agent: str = DEFAULT_AGENT
    today: date | None = None
    max_chars: int | None = None


class MemoryRequest(NamedTuple):
    """MEMORY.md entry by entry, its size against the bootstrap budget, and for each promoted
    entry what earned it (what `dream explain` knows)."""

    agent: str = DEFAULT_AGENT


class DemoteRequest(NamedTuple):
    """Move a promoted entry out of MEMORY.md into the archive note (undoable). `digest`: the
    entry's as `memory` listed it; refused if it changed since."""

    key: str
    agent: str = DEFAULT_AGENT
    digest: str | None = None


class UndoRequest(NamedTuple):
    """Undo the demotion of the entry `key`: back where it was in MEMORY.md."""

    key: str
    agent: str = DEFAULT_AGENT


class DreamsRequest(NamedTuple):
    """DREAMS.md and the phase reports, newest first, and a dry run of tonight's sweep."""

    agent: str = DEFAULT_AGENT


Request = (PingRequest | StatusRequest | SearchRequest | GetRequest | SyncRequest
           | DreamRequest | AddRequest | ContextRequest | MemoryRequest | DemoteRequest
           | UndoRequest | DreamsRequest)


class Envelope(NamedTuple):
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
    req_id = request_id(data)
    try:
        return Envelope(parse_fields(data), req_id)
    except ProtocolError as exc:
        exc.req_id = req_id  # echoed in the error reply, for pipelining clients
        raise


def request_id(data: dict[str, Any]) -> str | int | None:
    """The client's id to echo. A lone surrogate in it is echoed as a JSON escape (see
    encode_reply), so the client gets back exactly what it sent."""
    req_id = data.get("id")
    if req_id is not None and (isinstance(req_id, bool) or not isinstance(req_id, (str, int))
                               or (isinstance(req_id, str) and len(req_id) > 256)
                               or (isinstance(req_id, int) and not -2**63 <= req_id < 2**63)):
        raise ProtocolError("bad_request", "'id' must be a string (≤ 256 chars) or a 64-bit "
                                           "integer")
    return req_id


# -- the table ----------------------------------------------------------------------------------

# op -> its request record. Each field travels under its camelCase name (or the one in _WIRE)
# and is read by its kind: a parameter by its rule in `params` (the field's name), a flag
# (a bool field) as true or false, any other field as free text; a field left at None is not
# sent, so the daemon applies its own default. `_UNSENT` lists the fields a client leaves out
# at their default as well (a ping asks the daemon, not an agent).
REQUESTS: dict[str, type[Request]] = {
    "ping": PingRequest, "status": StatusRequest, "search": SearchRequest, "get": GetRequest,
    "sync": SyncRequest, "dream": DreamRequest, "add": AddRequest, "context": ContextRequest,
    "memory": MemoryRequest, "demote": DemoteRequest, "undo": UndoRequest, "dreams": DreamsRequest}
_WIRE = {"from_line": "from"}
_UNSENT = {(PingRequest, "agent"), (SearchRequest, "explain")}
_TEXT_BYTES = {"text": MAX_NOTE_BYTES}


def wire_name(name: str) -> str:
    head, *rest = name.split("_")
    return _WIRE.get(name) or head + "".join(part[:1].upper() + part[1:] for part in rest)


def parse_fields(data: dict[str, Any]) -> Request:
    op = data.get("op")
    if op is None:
        raise ProtocolError("bad_request", f"missing 'op': one of {', '.join(OPS)}")
    if not isinstance(op, str):
        raise ProtocolError("bad_request", f"'op' must be a string, got {_json_type(op)}")
    if op not in OPS:
        raise ProtocolError("bad_request", f"unknown op {op[:64]!r}: one of {', '.join(OPS)}")
    kind = REQUESTS[op]
    f = _Fields(data)
    defaults: dict[str, Any] = kind._field_defaults
    values: dict[str, Any] = {}
    for name in kind._fields:
        wire, default = wire_name(name), defaults.get(name)
        if name in params.RULES:
            value = f.param(wire, required=name not in defaults)
        elif isinstance(default, bool):
            value = f.flag(wire, default)
        else:  # free text
            value = f.text(wire, required=name not in defaults,
                           max_bytes=_TEXT_BYTES.get(name, 4096))
        # an optional field left out (or, free text, left empty) takes its default
        values[name] = default if name in defaults and value in (None, "") else value
    request: Request = kind(**values)
    if isinstance(request, AddRequest):
        _check_note(request)
    return request


def _check_note(request: AddRequest) -> None:
    if not request.text.strip():
        raise ProtocolError("bad_request", "'text' must not be empty")
    if request.target not in NOTE_TARGETS:
        raise ProtocolError("bad_request", f"'target' must be one of {', '.join(NOTE_TARGETS)}"
                                           f"; got {request.target[:32]!r}")


def to_wire(request: Request) -> dict[str, Any]:
    """The JSON object a client sends for `request` (what `parse_fields` reads back)."""
    kind = type(request)
    defaults: dict[str, Any] = kind._field_defaults
    out: dict[str, Any] = {"op": op_name(request)}
    for name, value in zip(request._fields, request, strict=True):
        if value is None or value == () or ((kind, name) in _UNSENT
                                            and value == defaults.get(name)):
            continue
        out[wire_name(name)] = (list(value) if isinstance(value, tuple)
                                else value.isoformat() if isinstance(value, date) else value)
    return out


def is_long(request: Request) -> bool:
    """Operations that may run for minutes: the server gives them their own small pool."""
    return isinstance(request, (DreamRequest, DreamsRequest)) or (isinstance(request, SyncRequest)
                                                 and request.wait)


def op_name(request: Request) -> str:
    return type(request).__name__.removesuffix("Request").lower()


# Wire field -> request parameter (its rule in `params`); messages name the wire field.
_PARAM = {wire_name(name): name for name in params.RULES}
WIRE_NAMES = {name: f"'{wire_name(name)}'" for name in params.RULES}


class _Fields:
    """Accessors that raise ProtocolError naming the field as the client wrote it.

    JSON shapes (flags, required keys) are checked here; parameter values by the rules in
    `params`, which the command line shares. `text` checks a free-text field of a new op.
    """

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def agent(self, required_default: str | None = DEFAULT_AGENT) -> Any:
        value = self.param("agent")
        return required_default if value is None else value

    def param(self, key: str, *, required: bool = False) -> Any:
        """Wire field `key` checked by its parameter rule; None when absent."""
        value = self._data.get(key)
        if value is None and required:
            raise ProtocolError("bad_request", f"missing '{key}'")
        try:
            return params.check(_PARAM.get(key, key), value)
        except params.ParamError as exc:
            raise ProtocolError("bad_request", exc.render(WIRE_NAMES)) from None

    def text(self, key: str, *, required: bool = False, max_bytes: int = 4096) -> Any:
        value = self._data.get(key)
        if value is None:
            if required:
                raise ProtocolError("bad_request", f"missing '{key}'")
            return None
        try:
            return params.text(key, value, max_bytes, empty_ok=True)
        except params.ParamError as exc:
            raise ProtocolError("bad_request", exc.render({key: f"'{key}'"})) from None

    def flag(self, key: str, default: bool) -> bool:
        value = self._data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ProtocolError("bad_request", f"'{key}' must be true or false, got "
                                               f"{_json_type(value)}")
        return value


def _json_type(value: Any) -> str:
    return params.kind(value)


# -- replies ------------------------------------------------------------------------------------

def encode_reply(payload: dict[str, Any], req_id: str | int | None = None) -> bytes:
    """`payload` must hold "ok"; strict JSON (NaN is an error, surfaced as `internal`).

    Text that UTF-8 cannot carry (a lone surrogate in an echoed id, or in a message quoting
    the request) is sent as JSON \\u escapes instead of failing.
    """
    if req_id is not None:
        payload = {**payload, "id": req_id}
    try:
        return json.dumps(payload, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload, ensure_ascii=True, allow_nan=False,
                          separators=(",", ":")).encode("ascii")


def ok_reply(fields: dict[str, Any] | None = None, req_id: str | int | None = None) -> bytes:
    return encode_reply({"ok": True, **(fields or {})}, req_id)


# The reply of last resort: bytes that need no encoding, for when even an error reply fails.
INTERNAL_REPLY = b'{"ok":false,"error":{"code":"internal","message":"internal error"}}'


def error_reply(code: str, message: str, req_id: str | int | None = None) -> bytes:
    """An error reply; never raises."""
    if code not in ERROR_CODES:
        code = "internal"
    try:
        return encode_reply({"ok": False, "error": {"code": code, "message": str(message)}},
                            req_id)
    except Exception:  # an id or message of a type json cannot write: drop it, still answer
        return INTERNAL_REPLY
