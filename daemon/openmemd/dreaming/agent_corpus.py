"""Other agents' session messages (Claude Code, Codex) in dreaming's session corpus.

OpenClaw's light phase copies its transcripts' messages into
`memory/.dreams/session-corpus/<day>.txt`, one `[<agent>/sessions/<file>#L<n>] <snippet>` line
each, and ranks those lines like dated notes. Claude Code and Codex messages join the same
corpus as `[<source>/<rel>#L<n>] <snippet>` (the citation a search gives them), masked by the
transcript rules before they reach this module (the reading is `api.session_dreams`'s). Each
message gets one line, found again by its tag: a search that cites the message (its recall) and
the light phase's ingestion (a low-weight "daily" signal) count on the same entry, so what keeps
coming back across sessions passes deep's gates as a dated note's line does.

Callers hold the recall store's lock: it orders the appends.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .markdown_io import UnsafePathError, workspace_target
from .recall_hit import RecallHit

log = logging.getLogger("openmemd.dreaming")

CORPUS_DIR = "memory/.dreams/session-corpus"
SESSION_SCORE = 0.58  # OpenClaw's score for an ingested session message
MAX_SNIPPET_CHARS = 280
MIN_SNIPPET_CHARS = 12
SESSIONS_QUERY = "__dreaming_sessions__"  # + ":<day>": the query an ingested line is under
MAX_NEW_LINES = 240  # lines appended per sweep (OpenClaw's cap); the rest come next sweep
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class CorpusMessage:
    """One message of another agent's session: `tag` its citation (`claude-code/<rel>#L7`),
    `day` its day in the dreaming time zone, `text` its masked line ("User: …")."""

    tag: str
    day: str
    text: str
    score: float = SESSION_SCORE


# the messages of other agents' sessions since a moment (`api.session_dreams`)
AgentMessages = Callable[[datetime], Sequence[CorpusMessage]]


@dataclass(frozen=True)
class CorpusLine:
    day: str
    hit: RecallHit  # the corpus line, as a recall of it
    new: bool  # appended now


def snippet(text: str) -> str:
    return _WS.sub(" ", text).strip()[:MAX_SNIPPET_CHARS]


def corpus_path(day: str) -> str:
    return f"{CORPUS_DIR}/{day}.txt"


def place(workspace: Path, messages: Sequence[CorpusMessage], max_new: int = MAX_NEW_LINES, *,
          write: bool = True) -> list[CorpusLine]:
    """Each message's corpus line, appended if it has none yet (at most `max_new` appended;
    `write=False`: where it would be, nothing written); a message too short to be a snippet,
    or past the cap, has none."""
    lines: dict[str, list[str]] = {}
    out: list[CorpusLine] = []
    appended = 0
    for message in messages:
        text = snippet(message.text)
        if len(text) < MIN_SNIPPET_CHARS or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", message.day):
            continue
        rel = corpus_path(message.day)
        held = lines.get(rel)
        if held is None:
            held = lines[rel] = _read_lines(workspace, rel)
        prefix = f"[{message.tag}] "
        number = next((i + 1 for i, line in enumerate(held) if line.startswith(prefix)), 0)
        new = number == 0
        if new:
            if appended >= max_new:
                continue
            if write and not _append(workspace, rel, prefix + text):
                break  # a corpus that cannot be written: the rest waits for the next sweep
            held.append(prefix + text)
            number, appended = len(held), appended + 1
        body = held[number - 1][len(prefix):]
        out.append(CorpusLine(message.day, RecallHit(rel, number, number, message.score, body),
                              new))
    return out


def _read_lines(workspace: Path, rel: str) -> list[str]:
    try:
        target = workspace_target(workspace, rel)
        text = target.read_text(encoding="utf-8", errors="replace")
    except (OSError, UnsafePathError):
        return []
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n") if text else []


def _append(workspace: Path, rel: str, line: str) -> bool:
    """One line appended (a file OpenClaw also appends to: never rewritten); False, logged,
    when it cannot be (a symlinked corpus, a full disk): recalls of notes still count."""
    try:
        target = workspace_target(workspace, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "r+b") as fh:
            size = fh.seek(0, os.SEEK_END)
            torn = size > 0 and os.pread(fh.fileno(), 1, size - 1) != b"\n"
            fh.write((("\n" if torn else "") + line + "\n").encode("utf-8"))
    except (OSError, UnsafePathError) as exc:
        log.warning("could not append to the session corpus %s: %s", rel, exc)
        return False
    return True
