"""Claude Code's SessionStart hook, its side of the wire: what Claude Code sends on stdin, what
it reads back on stdout, and how much of it it keeps.

Claude Code runs the hook at a session's start, resume, `/clear` and after a compaction, with
a JSON object on stdin (`session_id`, `transcript_path`, `cwd`, `hook_event_name`:
"SessionStart", `source`: startup|resume|clear|compact), and adds the hook's
`hookSpecificOutput.additionalContext` to the session. Its hooks reference caps that string at
10,000 characters: a longer one is saved to a file and the model sees a 2 KB preview (issue
anthropics/claude-code#51537; measured: 10,000 kept, 10,001 cut). It counts JavaScript string
length (UTF-16 units: an emoji is two), so the fit here does too, with a margin.

Pure: no I/O; `cli/context_hook.py` runs it.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

HOST = "claude-code"
EVENT = "SessionStart"
SOURCES = ("startup", "resume", "clear", "compact")
LIMIT = 10_000  # Claude Code's cap on additionalContext, in UTF-16 units
FIT = LIMIT - 200  # what we fill: a margin for a count made differently
MAX_INPUT_BYTES = 1024 * 1024  # the hook's stdin is a small object; more is not Claude Code

# The one line before the memory block: what the model can do about what it does not show.
TOOLS_LINE = (
    "Memory tools (openmemd MCP server): memory_search searches the user's long-term memory "
    "(MEMORY.md, daily notes, past sessions) — use it before answering about past work, "
    "decisions, preferences or people, and when the notes below are cut; memory_get reads the "
    "lines a hit cites; memory_add saves a fact, decision or preference worth remembering "
    "(today's note; long-term when asked).")


class HookInputError(ValueError):
    """Stdin is not a SessionStart hook's input."""


class HookInput(NamedTuple):
    session_id: str = ""
    cwd: str = ""
    source: str = ""


def read_input(raw: bytes) -> HookInput:
    """The hook's input, or HookInputError naming what is wrong with it."""
    if len(raw) > MAX_INPUT_BYTES:
        raise HookInputError(f"stdin is over {MAX_INPUT_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise HookInputError(f"stdin is not JSON: {exc}"[:200]) from None
    if not isinstance(data, dict):
        raise HookInputError(f"stdin is not a JSON object but {type(data).__name__}")
    event = data.get("hook_event_name", EVENT)
    if event != EVENT:
        # another event's output under SessionStart's name would be refused by Claude Code
        raise HookInputError(f"hook_event_name is {str(event)[:40]!r}, not {EVENT!r}")
    fields = {k: data.get(k) for k in HookInput._fields}
    bad = [k for k, v in fields.items() if v is not None and not isinstance(v, str)]
    if bad:
        raise HookInputError(f"{', '.join(bad)} must be strings")
    return HookInput(**{k: v or "" for k, v in fields.items()})


def units(text: str) -> int:
    """`text`'s length as Claude Code counts it (UTF-16 code units)."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def context_budget() -> int:
    """Characters left for the memory block beside the tools line."""
    return FIT - len(TOOLS_LINE) - 2


def additional_context(block: str) -> str:
    """The tools line, then the block (the tools line alone when there is no memory yet)."""
    return TOOLS_LINE + ("\n\n" + block.rstrip("\n") if block.strip() else "")


def over_by(context: str) -> int:
    """How many UTF-16 units `context` is past what we fill (0 when it fits)."""
    return max(0, units(context) - FIT)


def output(context: str) -> str:
    """The hook's stdout: one JSON line, ASCII (whatever the locale's encoding)."""
    reply: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": EVENT,
                                                    "additionalContext": context}}
    return json.dumps(reply, ensure_ascii=True) + "\n"
