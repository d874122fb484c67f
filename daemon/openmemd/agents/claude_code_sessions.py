"""Claude Code's session files: `<config dir>/projects/<project>/<session>.jsonl`.

The config dir is `$CLAUDE_CONFIG_DIR`, else `~/.claude`. A subagent's file is
`<project>/<session>/subagents/agent-<id>.jsonl` (2.1) or `<project>/agent-<id>.jsonl` (2.0),
its records marked `isSidechain`; its lines are labelled as a subagent's.

Records (Claude Code 2.x, one JSON object a line): `user` / `assistant` with `message.content`
a string or blocks (`text`, `tool_use` {name, input}, `tool_result`, `thinking`, `image`),
`sessionId`, `cwd`, `timestamp`, `uuid`/`parentUuid`, `isSidechain`, `isCompactSummary`
(the summary a compaction left), `isMeta` (a caveat the CLI adds); `summary` {summary,
leafUuid}; `system`, `file-history-snapshot`, `queue-operation`, `progress` and other
bookkeeping. Kept: user and assistant text, tool calls (name and a short input), summaries.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openmemd.agents.session_records import Context, ReadState, SessionLine, read_lines, texts
from openmemd.agents.session_records import tool_call as _tool_call

SOURCE = "claude-code"
# Bookkeeping records: nothing a person looks for again; skipped without counting.
_BOOKKEEPING = frozenset({"system", "file-history-snapshot", "queue-operation", "progress",
                          "custom-title", "agent-name", "tag", "last-prompt", "pr-link",
                          "attachment"})


def sessions_root(environ: Mapping[str, str], home: Path) -> Path:
    """Where Claude Code keeps its session files."""
    configured = environ.get("CLAUDE_CONFIG_DIR", "").strip()
    base = Path(os.path.expanduser(configured)) if configured else home / ".claude"
    return base / "projects"


def is_subagent_file(rel: str) -> bool:
    """`rel` (under the projects folder) is a subagent's session file."""
    parts = rel.split("/")
    return parts[-1].startswith("agent-") or "subagents" in parts[:-1]


def read(data: bytes, state: ReadState) -> tuple[list[SessionLine], ReadState]:
    return read_lines(data, state, _record)


def _record(rec: dict[str, Any], ctx: Context) -> list[tuple[str, str, object]] | None:
    kind = rec.get("type")
    if kind in _BOOKKEEPING:
        return []
    if kind == "summary":
        summary = rec.get("summary")
        return [("Summary", summary, rec.get("timestamp"))] if isinstance(summary, str) else []
    if kind not in ("user", "assistant"):
        return None
    if isinstance(rec.get("sessionId"), str):
        ctx.session = rec["sessionId"]
    ctx.saw_project(rec.get("cwd"))
    message = rec.get("message")
    if not isinstance(message, dict) or rec.get("isMeta") is True:
        return []
    stamp = rec.get("timestamp")
    sub = ctx.subagent or rec.get("isSidechain") is True
    role = "Subagent user" if sub else "User"
    if kind == "assistant":
        role = "Subagent assistant" if sub else "Assistant"
    if rec.get("isCompactSummary") is True:
        role = "Compaction summary"
    content = message.get("content")
    if isinstance(content, str):
        return [(role, content, stamp)]
    if not isinstance(content, list):
        return []
    out: list[tuple[str, str, object]] = [(role, texts(content, ("text",)), stamp)]
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            label = "Subagent tool call" if sub else "Tool call"
            out.append((label, _tool_call(block.get("name"), block.get("input")), stamp))
    return out  # tool_result, thinking and images are left out
