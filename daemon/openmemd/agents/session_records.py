"""What an agent's session-file reader gives the index: the lines worth finding again.

A reader is one pure function, `read(data, state) -> (lines, state)`: `data` is the file's
bytes from `state.offset` on; only complete lines (ending in a newline) are read, so a torn last
line waits for the rest of it, and the returned state says where the next read starts. Unknown
record types are counted (`state.unknown`), bad lines too (`state.bad`); neither stops a read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

TOOL_INPUT_CHARS = 160  # a tool call's input, shortened to what tells the call apart
_SPACE = re.compile(r"\s+")
_SURROGATE = re.compile("[\ud800-\udfff]")
# The input fields that say what a tool call did, most telling first.
_TELLING_KEYS = ("command", "cmd", "file_path", "path", "pattern", "query", "url",
                 "description", "prompt", "skill")


@dataclass(frozen=True)
class SessionLine:
    """One message line: `line` is its 1-based JSONL line; `text` is not masked yet."""

    line: int
    label: str  # "User", "Assistant", "Tool call", "Summary", "Compaction summary"
    text: str
    timestamp_ms: int  # 0: not known
    session: str
    project: str  # the cwd the agent ran in ("" not known)


@dataclass(frozen=True)
class ReadState:
    """Where a read stopped, and what it carries to the next (a session's id and cwd come
    from early records)."""

    offset: int = 0  # bytes read (always at a line start)
    line: int = 0  # JSONL lines read
    session: str = ""
    project: str = ""
    unknown: tuple[tuple[str, int], ...] = ()  # record type -> how many were skipped
    bad: int = 0  # lines that are not a JSON object
    projects: tuple[str, ...] = field(default=())  # every cwd seen, in order
    subagent: bool = False  # the whole file is a subagent's (its name or folder says so)


@dataclass
class Context:
    """A reader's working state while it reads one batch of records."""

    session: str
    project: str
    projects: list[str]
    unknown: dict[str, int]
    subagent: bool = False

    def skip(self, kind: str) -> None:
        """A record of a type this reader does not know: skipped and counted."""
        kind = kind[:60]
        self.unknown[kind] = self.unknown.get(kind, 0) + 1

    def saw_project(self, cwd: object) -> None:
        if isinstance(cwd, str) and cwd:
            self.project = cwd
            if cwd not in self.projects:
                self.projects.append(cwd)


# record, context -> [(label, text, timestamp value)]; None: an unknown record type.
RecordReader = Callable[[dict[str, Any], Context], "list[tuple[str, str, object]] | None"]


def read_lines(data: bytes, state: ReadState, record: RecordReader
               ) -> tuple[list[SessionLine], ReadState]:
    """The message lines of `data`'s complete lines, and the state after them."""
    end = data.rfind(b"\n") + 1  # 0: no complete line yet
    ctx = Context(state.session, state.project, list(state.projects), dict(state.unknown),
                  state.subagent)
    out: list[SessionLine] = []
    number, bad = state.line, state.bad
    for raw in data[:end].split(b"\n")[:-1]:
        number += 1
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            bad += 1
            continue
        if not isinstance(obj, dict):
            bad += 1
            continue
        found = record(obj, ctx)
        if found is None:
            ctx.skip(str(obj.get("type", "?")))
            continue
        for label, text, stamp in found:
            text = _SURROGATE.sub("\ufffd", _SPACE.sub(" ", text)).strip()
            if text:
                out.append(SessionLine(number, label, text, timestamp_ms(stamp), ctx.session,
                                       ctx.project))
    return out, replace(state, offset=state.offset + end, line=number, session=ctx.session,
                        project=ctx.project, unknown=tuple(sorted(ctx.unknown.items())),
                        bad=bad, projects=tuple(ctx.projects))


def timestamp_ms(value: object) -> int:
    """An ISO 8601 string or epoch seconds/ms as ms since the epoch (0: none or unreadable)."""
    if isinstance(value, str):
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
        except (ValueError, OverflowError, OSError):
            return 0
    if isinstance(value, (int, float)) and not isinstance(value, bool) \
            and math.isfinite(value) and 0 < value < 1e15:
        return int(value * 1000 if value < 1e11 else value)
    return 0


def tool_call(name: object, arguments: object) -> str:
    """A tool call as its name and a short form of its input: `Bash: git status`."""
    shown = str(name) if isinstance(name, str) and name else "tool"
    if isinstance(arguments, str):  # Codex: the arguments as a JSON string
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            pass
    brief = _brief(arguments)
    return f"{shown}: {brief}" if brief else shown


def _brief(arguments: object) -> str:
    if isinstance(arguments, dict):
        for key in _TELLING_KEYS:
            value = arguments.get(key)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                value = " ".join(value)
            if isinstance(value, str) and value.strip():
                return _cut(value)
        try:
            return _cut(json.dumps(arguments, ensure_ascii=False, sort_keys=True))
        except (TypeError, ValueError):
            return ""
    if isinstance(arguments, str):
        return _cut(arguments)
    return ""


def _cut(text: str) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= TOOL_INPUT_CHARS else text[:TOOL_INPUT_CHARS - 1] + "…"


def texts(blocks: Iterable[object], kinds: tuple[str, ...]) -> str:
    """The text of the content blocks of these kinds, joined."""
    return " ".join(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") in kinds
                    and isinstance(b.get("text"), str))
