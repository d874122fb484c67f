"""Reading a session transcript for `get`: the message lines the index holds, never raw JSONL.

A transcript is indexed as rendered messages ("User: …", "Assistant: …", secrets masked,
`index.sessions`), each cited by the JSONL line it came from; `get` reads it the same way, so
what search cites is what `get` returns. Line numbers (from, lines, totalLines) count JSONL
lines, as the citations do; `lineNumbers` gives the JSONL line of each line of `text`.
"""

from __future__ import annotations

from typing import Any

from openmemd.errors import ForbiddenError, NotFoundError
from openmemd.index.agent_sessions import AGENT_SOURCES, render_bytes
from openmemd.index.lines.cited import past_end
from openmemd.index.scan import ScanScope, SkipFile, read_content, stat_entry
from openmemd.index.sessions import RenderedSession, render_session


def render_entry(source: str, path: str, text: str) -> RenderedSession:
    """A transcript's or another agent's session file's message lines, as the index holds
    them."""
    if source in AGENT_SOURCES:
        return render_bytes(source, path, text.encode("utf-8"))
    return render_session(text)


def read_transcript(scope: ScanScope, rel: str, from_line: int | None,
                    lines: int | None) -> dict[str, Any]:
    entry = stat_entry(scope, rel)  # None: missing, or behind a symlink (never followed)
    if entry is None:
        raise NotFoundError(f"{rel}: no such transcript")
    try:
        content = read_content(scope, entry)  # the same bounds as indexing it
    except SkipFile as exc:
        raise ForbiddenError(f"{rel}: {exc}") from None
    raw_lines = content.text.split("\n")
    total = len(raw_lines) - (1 if content.text.endswith("\n") else 0)
    start = from_line or 1
    end = start + lines - 1 if lines is not None else total
    past_end(rel, start, total)
    rendered = render_entry(entry.source, rel, content.text)
    picked = [(number, text) for number, text in zip(rendered.line_map,
                                                     rendered.text.split("\n"), strict=False)
              if start <= number <= end]
    return {"path": rel, "text": "\n".join(text for _, text in picked), "from": start,
            "lines": len(picked), "totalLines": total,
            "lineNumbers": [number for number, _ in picked]}
