"""Other agents' session files (Claude Code, Codex) as sources beside `memory` and `sessions`.

A file is indexed as `<source>/<path under the agent's sessions folder>` (`claude-code/-home-me-
app/<id>.jsonl`, `codex/2026/12/04/rollout-….jsonl`), rendered as OpenClaw transcripts are: one
line per message, "User: …", secrets masked by the transcript rules (`index.redact`), each
line cited by its JSONL line and dated by its message's timestamp (`index.line_days`).

Session files grow while the agent runs: `AppendReader` remembers, per file, how far it read
and reads only what was appended (a torn last line waits for its newline); a file that shrank,
was replaced (another inode) or whose last read bytes changed is read again whole.
"""

from __future__ import annotations

import io
import os
import stat
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from openmemd.agents import claude_code_sessions, codex_sessions
from openmemd.agents.session_records import ReadState, SessionLine
from openmemd.index.chunking import sha256_hex
from openmemd.index.redact import redact
from openmemd.index.safeopen import open_beneath
from openmemd.index.sessions import RenderedSession

READERS: dict[str, ModuleType] = {claude_code_sessions.SOURCE: claude_code_sessions,
                                  codex_sessions.SOURCE: codex_sessions}
AGENT_SOURCES = tuple(READERS)
# A session file can outgrow the note cap by far (tool calls, long runs); this bounds a read.
MAX_SESSION_BYTES = 256 * 1024 * 1024
_FINGERPRINT = 256  # bytes before the read offset that must be unchanged to read on from it
_READ = Callable[[bytes, ReadState], tuple[list[SessionLine], ReadState]]


def roots(sources: tuple[str, ...], environ: Mapping[str, str] | None = None,
          home: Path | None = None) -> tuple[tuple[str, Path], ...]:
    """(source, sessions folder) of each agent source among `sources`."""
    env = os.environ if environ is None else environ
    where = Path(env.get("HOME") or Path.home()) if home is None else home
    return tuple((s, READERS[s].sessions_root(env, where)) for s in sources if s in READERS)


def is_session_name(name: str) -> bool:
    return name.endswith(".jsonl") and not name.startswith(".")


def first_state(source: str, rel: str) -> ReadState:
    """The state a whole read of `<source>/<rel>` starts from."""
    under = rel.split("/", 1)[1] if "/" in rel else rel
    sub = source == claude_code_sessions.SOURCE and claude_code_sessions.is_subagent_file(under)
    return ReadState(subagent=sub)


def parse(source: str, rel: str, data: bytes) -> tuple[list[SessionLine], ReadState]:
    """Every message line of a whole file's bytes."""
    read: _READ = READERS[source].read
    return read(data, first_state(source, rel))


def rendered(lines: list[SessionLine]) -> RenderedSession:
    """The lines as the index holds them: masked, one a line, cited by JSONL line."""
    text = "\n".join(f"{m.label}: {redact(m.text)}" for m in lines)
    line_map = tuple(m.line for m in lines)
    stamps = tuple(m.timestamp_ms for m in lines)
    digest = sha256_hex(text + "\n" + ",".join(map(str, line_map)) + "\n"
                        + ",".join(map(str, stamps)))
    return RenderedSession(text, line_map, digest, stamps)


def render_bytes(source: str, rel: str, data: bytes) -> RenderedSession:
    return rendered(parse(source, rel, data)[0])


@dataclass
class _Held:
    ino: int
    dev: int
    state: ReadState
    tail: bytes  # the _FINGERPRINT bytes before state.offset
    lines: list[SessionLine]


class AppendReader:
    """Reads agents' session files, each from where the last read of it stopped."""

    def __init__(self) -> None:
        self._held: dict[str, _Held] = {}
        self._lock = threading.Lock()

    def read(self, root: Path, source: str, rel: str) -> tuple[RenderedSession, str]:
        """(the file's rendered lines, a warning or ""); raises OSError if it cannot be read."""
        inner = rel.split("/", 1)[1]
        fd = open_beneath(root, inner)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise OSError(f"{rel}: not a regular file")
            if st.st_size > MAX_SESSION_BYTES:
                raise OSError(f"larger than the {MAX_SESSION_BYTES}-byte cap for session files")
            with self._lock:
                held = self._held.get(rel)
            held = self._go_on(fh, st, held, source, rel)
        with self._lock:
            self._held[rel] = held
        warning = ""
        unknown = sum(n for _, n in held.state.unknown)
        if unknown or held.state.bad:
            warning = (f"skipped {unknown} record(s) of unknown type "
                       f"({', '.join(k for k, _ in held.state.unknown)})" if unknown else "")
            if held.state.bad:
                warning += ("; " if warning else "") + f"{held.state.bad} line(s) not JSON"
        return rendered(held.lines), warning

    def forget(self, rel: str) -> None:
        with self._lock:
            self._held.pop(rel, None)

    def _go_on(self, fh: io.BufferedReader, st: os.stat_result, held: _Held | None, source: str,
               rel: str) -> _Held:
        if held is not None and self._still_growing(fh, st, held):
            fh.seek(held.state.offset)
            read: _READ = READERS[source].read
            new, state = read(fh.read(st.st_size - held.state.offset),
                                              held.state)
            lines = held.lines + new
        else:  # first read, or rewritten, truncated or replaced: read again whole
            fh.seek(0)
            lines, state = parse(source, rel, fh.read(st.st_size))
        start = max(0, state.offset - _FINGERPRINT)
        fh.seek(start)
        tail = fh.read(state.offset - start)
        return _Held(st.st_ino, st.st_dev, state, tail, lines)

    @staticmethod
    def _still_growing(fh: io.BufferedReader, st: os.stat_result, held: _Held) -> bool:
        if (st.st_ino, st.st_dev) != (held.ino, held.dev) or st.st_size < held.state.offset:
            return False
        fh.seek(held.state.offset - len(held.tail))
        return fh.read(len(held.tail)) == held.tail


def file_projects(root: Path, rel: str, source: str, head_bytes: int = 256 * 1024
                  ) -> tuple[str, ...]:
    """The cwds a session file's first records name (its project; () if none or unreadable)."""
    try:
        fd = open_beneath(root, rel.split("/", 1)[1])
    except OSError:
        return ()
    with os.fdopen(fd, "rb") as fh:
        head = fh.read(head_bytes)
    read: _READ = READERS[source].read
    return read(head, first_state(source, rel))[1].projects


def in_project(projects: tuple[str, ...], project: str) -> bool:
    """Whether a session that ran in `projects` belongs to `project` (it or a folder in it)."""
    want = os.path.normpath(project)
    return any(p == want or p.startswith(want.rstrip("/") + "/")
               for p in (os.path.normpath(x) for x in projects))


class SessionProjects:
    """Which folders each agent session file ran in, read from its first records and kept
    while the file's size and mtime stay the same."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, tuple[tuple[int, int], tuple[str, ...]]] = {}

    def has(self, root: Path | None, path: str, source: str, project: str) -> bool:
        """Whether `path` (under its agent's folder `root`) ran in `project`."""
        if root is None:
            return False
        try:
            st = os.lstat(root / path.split("/", 1)[1])
        except OSError:
            return False
        key = (st.st_mtime_ns, st.st_size)
        with self._lock:
            held = self._held.get(path)
        if held is None or held[0] != key:
            held = (key, file_projects(root, path, source))
            with self._lock:
                if len(self._held) > 4096:
                    self._held.clear()
                self._held[path] = held
        return in_project(held[1], project)
