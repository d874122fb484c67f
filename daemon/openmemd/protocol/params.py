"""Request parameters: one set of rules for the wire protocol and the command line.

Each rule takes a Python value and returns it normalised, or raises `ParamError(field,
problem)`. The error names the field by its canonical name (the command line's argument
`dest`); each front end renders it with its own name for the field: the protocol as
``'maxResults' must be between 1 and 200``, the command line as ``--max-results must be
between 1 and 200``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any

from openmemd.config import PHASE_CHOICES, SOURCES
from openmemd.errors import BadRequestError

MAX_QUERY_BYTES = 4096
MAX_PATH_BYTES = 4096
MAX_NOTE_BYTES = 4096  # one note appended by `add` (a fact, not a document)
NOTE_TARGETS = ("daily", "long-term")
MAX_RESULTS = 200
MAX_NAMESPACE_BYTES = 1024  # a PostgreSQL namespace (config: at most 200 characters)
MAX_LINE = 2**31 - 1
# `context`'s whole block within N characters: at least what its header and tags need
MIN_CONTEXT_CHARS, MAX_CONTEXT_CHARS = 1000, 10_000_000
_AGENT_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ParamError(BadRequestError):
    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field} {problem}")
        self.field = field
        self.problem = problem

    def render(self, names: Mapping[str, str]) -> str:
        return f"{names.get(self.field, self.field)} {self.problem}"


def kind(value: Any) -> str:
    """How a value is named in messages (JSON's words: they also fit command-line values)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def lone_surrogate(text: str) -> int | None:
    """Index of the first lone surrogate (JSON "\\ud800", undecodable argv bytes), else None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def text(field: str, value: Any, max_bytes: int, *, empty_ok: bool = False) -> str:
    """A string field: valid Unicode, within `max_bytes` as UTF-8, no NUL."""
    if not isinstance(value, str):
        raise ParamError(field, f"must be a string, got {kind(value)}")
    bad = lone_surrogate(value)
    if bad is not None:
        raise ParamError(field, f"must be valid Unicode text (a lone surrogate at character "
                                f"{bad})")
    size = len(value.encode("utf-8"))
    if size > max_bytes:
        raise ParamError(field, f"is {size} bytes; the limit is {max_bytes}")
    if "\x00" in value:
        raise ParamError(field, "must not contain NUL characters")
    if not empty_ok and not value.strip():
        raise ParamError(field, "must not be empty")
    return value


def _whole(field: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(field, f"must be a whole number, got {kind(value)}")
    if not lo <= value <= hi:
        limits = f"at least {lo}" if hi == MAX_LINE and value < lo else f"between {lo} and {hi}"
        raise ParamError(field, f"must be {limits} (got {_show(value)})")
    return value


def _show(value: int | float) -> str:
    # A JSON integer may have thousands of digits: show its start only.
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) <= 16 else f"{text[:12]}…"


def query(value: Any) -> str:
    return text("query", value, MAX_QUERY_BYTES)


def path(value: Any) -> str:
    return text("path", value, MAX_PATH_BYTES)


def namespace(value: Any) -> str:
    return text("namespace", value, MAX_NAMESPACE_BYTES)


def max_results(value: Any) -> int:
    return _whole("max_results", value, 1, MAX_RESULTS)


def min_score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamError("min_score", f"must be a number, got {kind(value)}")
    if not 0 <= value <= 1:  # also false for nan (no comparison with nan holds)
        raise ParamError("min_score", f"must be between 0 and 1 (got {_show(value)})")
    return float(value)


def from_line(value: Any) -> int:
    return _whole("from_line", value, 1, MAX_LINE)


def lines(value: Any) -> int:
    return _whole("lines", value, 1, MAX_LINE)


def sources(value: Any) -> tuple[str, ...]:
    if (not isinstance(value, (list, tuple)) or not value
            or not all(isinstance(v, str) and v in SOURCES for v in value)):
        raise ParamError("sources", f"must be a non-empty list of "
                                    f"{', '.join(repr(c) for c in SOURCES)}")
    return tuple(dict.fromkeys(value))


def max_chars(value: Any) -> int:
    return _whole("max_chars", value, MIN_CONTEXT_CHARS, MAX_CONTEXT_CHARS)


def today(value: Any) -> dt.date:
    """The day a search counts "yesterday" and "last week" from: an ISO date (YYYY-MM-DD)."""
    if isinstance(value, dt.date):
        return value
    try:
        if not isinstance(value, str) or len(value) != 10:
            raise ValueError(value)
        return dt.date.fromisoformat(value)
    except ValueError:
        shown = repr(value[:32]) if isinstance(value, str) else kind(value)
        raise ParamError("today", f"must be a date as YYYY-MM-DD; got {shown}") from None


def phase(value: Any) -> str:
    if not isinstance(value, str) or value not in PHASE_CHOICES:
        shown = repr(value[:32]) if isinstance(value, str) else kind(value)
        raise ParamError("phase", f"must be one of {', '.join(PHASE_CHOICES)}; got {shown}")
    return value


def agent(value: Any) -> str:
    if not isinstance(value, str) or not _AGENT_RE.match(value):
        raise ParamError("agent", "must be 1-64 letters, digits, - or _")
    return value


RULES: dict[str, Callable[[Any], Any]] = {
    "query": query, "path": path, "max_results": max_results, "min_score": min_score,
    "from_line": from_line, "lines": lines, "sources": sources, "phase": phase,
    "agent": agent, "namespace": namespace, "today": today, "max_chars": max_chars,
}

# The parameters each operation takes (the command line checks these before it routes a
# command to the daemon or runs it in-process, so both paths refuse the same input).
OP_PARAMS: dict[str, tuple[str, ...]] = {
    "search": ("query", "max_results", "min_score", "sources", "agent", "today"),
    "get": ("path", "from_line", "lines", "agent", "namespace"),
    "sync": ("agent",),
    "dream": ("phase", "agent"),
    "context": ("today", "agent", "max_chars"),
}


def check(field: str, value: Any) -> Any:
    """`value` normalised by the rule for `field`; None stays None (the default applies)."""
    return None if value is None else RULES[field](value)


def check_op(op: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter of `op` present in `values`, checked; the first problem is raised."""
    return {f: check(f, values.get(f)) for f in OP_PARAMS.get(op, ()) if f in values}


# -- the command line ---------------------------------------------------------------------------

# How the command line names each parameter in messages.
CLI_NAMES = {"query": "the query", "path": "the path", "max_results": "--max-results",
             "min_score": "--min-score", "from_line": "--from", "lines": "--lines",
             "sources": "--source", "phase": "--phase", "agent": "--agent",
             "namespace": "--namespace", "today": "--today", "max_chars": "--max-chars"}
_CLI_OPS = {"search": "search", "get": "get", "index": "sync", "dream": "dream",
            "context": "context"}


def usage_problem(command: str, args: Mapping[str, Any], endpoint: str | None) -> str | None:
    """The first problem with a command line's parameters and endpoint, named by its flags,
    or None. Checked before the command runs in-process or goes to the daemon, so both
    refuse the same input with the same words."""
    from openmemd.protocol.endpoint import EndpointError, parse_endpoint, resolve_endpoint

    values = dict(args)
    if isinstance(values.get("query"), list):  # `search` takes the query as several words
        values["query"] = " ".join(values["query"])
    try:
        check_op(_CLI_OPS.get(command, ""), values)
    except ParamError as exc:
        return exc.render(CLI_NAMES)
    if command != "service":
        try:
            # Syntax only: whether a remote endpoint is allowed is the daemon's decision.
            parse_endpoint(resolve_endpoint(endpoint), allow_remote=True)
        except EndpointError as exc:
            return f"endpoint {exc}"
    return None
