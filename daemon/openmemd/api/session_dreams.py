"""Claude Code and Codex sessions for dreaming: their messages, read as the index reads them.

Dreaming (`dreaming.agent_corpus`) keeps other agents' messages in its session corpus; this
module hands it those messages, read by the agents' own readers and masked by the transcript
rules (`index.agent_sessions.rendered`), so the corpus holds what search shows. Two ways in:
the light phase's ingestion (every user or assistant message of the lookback window) and a
search's recall (the message lines of the hit that answered).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime, tzinfo

from openmemd.dreaming.agent_corpus import AgentMessages, CorpusMessage
from openmemd.dreaming.answer_lines import best_lines
from openmemd.dreaming.clock import day_bucket, resolve_timezone
from openmemd.dreaming.recall import SessionMessages
from openmemd.dreaming.recall_hit import RecallHit
from openmemd.index.agent_sessions import AGENT_SOURCES, MAX_SESSION_BYTES, parse, rendered
from openmemd.index.safeopen import open_beneath
from openmemd.index.scan import ScanScope, scan_workspace
from openmemd.log import get_logger

log = get_logger(__name__)

# What a person said and was told; tool calls and summaries stay search's alone.
INGESTED_LABELS = frozenset({"User", "Assistant", "Subagent user", "Subagent assistant"})


class _Message:
    __slots__ = ("day", "label", "line", "text")

    def __init__(self, line: int, text: str, day: str) -> None:
        self.line, self.text, self.day = line, text, day
        self.label = text.split(":", 1)[0]


def _messages(scope: ScanScope, source: str, rel: str, tz: tzinfo) -> list[_Message]:
    """The file's message lines as the index holds them (masked), each with its day; [] when
    it cannot be read (logged)."""
    root = scope.agent_root(source)
    if root is None:
        return []
    try:
        fd = open_beneath(root, rel.split("/", 1)[1])
        with os.fdopen(fd, "rb") as fh:
            mtime = os.fstat(fh.fileno()).st_mtime
            data = fh.read(MAX_SESSION_BYTES)
    except OSError as exc:
        log.warning("session_unreadable_for_dreaming", path=rel, error=str(exc))
        return []
    session = rendered(parse(source, rel, data)[0])
    fallback = datetime.fromtimestamp(mtime, UTC)
    out = []
    for line, text, ms in zip(session.line_map, session.text.split("\n"), session.timestamps,
                              strict=False):
        moment = datetime.fromtimestamp(ms / 1000, UTC) if ms else fallback
        out.append(_Message(line, text, day_bucket(moment, tz)))
    return out


def sweep_messages(scope: ScanScope, timezone: str) -> AgentMessages:
    """The light phase's reader: every user and assistant message since a moment, of the
    session files changed since then, oldest file first."""
    tz = resolve_timezone(timezone)

    def since(cutoff: datetime) -> list[CorpusMessage]:
        agents = tuple(s for s in scope.sources if s in AGENT_SOURCES)
        if not agents:
            return []
        entries = [e for e in scan_workspace(ScanScope(scope.workspace, agents,
                                                       agent_roots=scope.agent_roots))
                   if e.mtime_ms >= cutoff.timestamp() * 1000]
        first = day_bucket(cutoff, tz)
        out = []
        for entry in sorted(entries, key=lambda e: (e.mtime_ms, e.path)):
            out += [CorpusMessage(f"{entry.path}#L{m.line}", m.day, m.text)
                    for m in _messages(scope, entry.source, entry.path, tz)
                    if m.label in INGESTED_LABELS and m.day >= first]
        return out

    return since


def recalled_messages(scope: ScanScope, timezone: str) -> SessionMessages:
    """The recall's reader: of each hit that answered the query, the one message that answers
    it (the hit's focus, else the message holding most of the query's words), at the hit's
    score. A hit matched by meaning alone names no message: it is not recalled."""
    tz = resolve_timezone(timezone)

    def told(query: str, hits: Sequence[RecallHit]) -> list[CorpusMessage]:
        out = []
        for hit in hits:
            lines = [m for m in _messages(scope, hit.source, hit.path, tz)
                     if hit.start_line <= m.line <= hit.end_line]
            answer = _answering(query, hit, lines)
            if answer is not None:
                out.append(CorpusMessage(f"{hit.path}#L{answer.line}", answer.day, answer.text,
                                         hit.score))
        return out

    return told


def _answering(query: str, hit: RecallHit, lines: list[_Message]) -> _Message | None:
    """A message is a whole thought: one answers, as a few lines of a note do."""
    if hit.start_line <= hit.focus_start <= hit.focus_end <= hit.end_line:
        focused = [m for m in lines if hit.focus_start <= m.line <= hit.focus_end]
        if len(focused) == 1:
            return focused[0]
        lines = focused or lines
    span = best_lines(query, "\n".join(m.text for m in lines), 1, max_lines=1)
    return lines[span[0] - 1] if span is not None else None
