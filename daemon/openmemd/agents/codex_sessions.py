"""Codex's session files ("rollouts"): `<codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl`.

The home is `$CODEX_HOME`, else `~/.codex`. Records (Codex CLI 0.4x–0.6x rollout format, one
`{timestamp, type, payload}` a line): `session_meta` {id, cwd, cli_version, …}, `turn_context`
{cwd, model, …}, `response_item` whose payload is a `message` (role user / assistant /
developer, content blocks `input_text` / `output_text`), `function_call` {name, arguments: a
JSON string}, `custom_tool_call` {name, input}, `local_shell_call` {action.command},
`function_call_output`, `reasoning`, …; `event_msg` (`user_message` / `agent_message` are copies
of the messages above, the rest UI events); `compacted` {message: the summary a compaction
left}. Kept: user and assistant text (not the instructions and environment Codex injects as
user messages), tool calls (name and a short input), compaction summaries; each message once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openmemd.agents.session_records import Context, ReadState, SessionLine, read_lines, texts
from openmemd.agents.session_records import tool_call as _tool_call

SOURCE = "codex"
# What Codex adds to a session as user messages, not what the person typed.
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
             "<permissions instructions>", "<user_shell_command>", "<turn_aborted>")
# Payloads of response_item that hold no message worth finding again (outputs, reasoning).
_QUIET_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "reasoning",
                          "local_shell_call_output", "ghost_snapshot", "other"})


def sessions_root(environ: Mapping[str, str], home: Path) -> Path:
    """Where Codex keeps its rollout files."""
    configured = environ.get("CODEX_HOME", "").strip()
    base = Path(os.path.expanduser(configured)) if configured else home / ".codex"
    return base / "sessions"


def read(data: bytes, state: ReadState) -> tuple[list[SessionLine], ReadState]:
    return read_lines(data, state, _record)


def _record(rec: dict[str, Any], ctx: Context) -> list[tuple[str, str, object]] | None:
    kind, payload, stamp = rec.get("type"), rec.get("payload"), rec.get("timestamp")
    if kind == "message" and "role" in rec:  # the oldest rollouts: bare response items
        kind, payload = "response_item", rec
    if not isinstance(payload, dict):
        payload = {}
    if kind in ("session_meta", "turn_context"):
        if kind == "session_meta" and isinstance(payload.get("id"), str):
            ctx.session = payload["id"]
        ctx.saw_project(payload.get("cwd"))
        return []
    if kind == "event_msg":
        return []  # user_message / agent_message copy response items; the rest is UI
    if kind == "compacted":
        summary = payload.get("message")
        return [("Compaction summary", summary, stamp)] if isinstance(summary, str) else []
    if kind == "response_item":
        return _item(payload, ctx, stamp)
    return None


def _item(item: dict[str, Any], ctx: Context, stamp: object) -> list[tuple[str, str, object]]:
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        content = item.get("content")
        text = texts(content, ("input_text", "output_text", "text")) \
            if isinstance(content, list) else content if isinstance(content, str) else ""
        if role == "user" and not text.lstrip().startswith(_INJECTED):
            return [("User", text, stamp)]
        if role == "assistant":
            return [("Assistant", text, stamp)]
        return []  # developer / system: instructions
    if kind == "function_call":
        return [("Tool call", _tool_call(item.get("name"), item.get("arguments")), stamp)]
    if kind == "custom_tool_call":
        return [("Tool call", _tool_call(item.get("name"), item.get("input")), stamp)]
    if kind == "local_shell_call":
        action = item.get("action")
        command = action.get("command") if isinstance(action, dict) else None
        return [("Tool call", _tool_call("shell", {"command": command}), stamp)]
    if kind == "web_search_call":
        action = item.get("action")
        return [("Tool call", _tool_call("web_search", action), stamp)]
    if kind not in _QUIET_ITEMS:
        ctx.skip(f"response_item/{kind}")
    return []
