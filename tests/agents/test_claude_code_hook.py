"""Claude Code's SessionStart hook, its side of the wire (agents/claude_code_hook.py): the
input it sends (Claude Code 2.x hooks reference: session_id, transcript_path, cwd,
hook_event_name, source), the output it reads, its 10,000-character cap in UTF-16 units."""

from __future__ import annotations

import json

import pytest

from openmemd.agents import claude_code_hook as hook

INPUT = {"session_id": "8c1a6f7e-0b5d-4a4e-9d0e-2f6f3c1b9a10",
         "transcript_path": "/home/ann/.claude/projects/-home-ann-app/8c1a6f7e.jsonl",
         "cwd": "/home/ann/app", "hook_event_name": "SessionStart", "source": "startup"}


@pytest.mark.parametrize("source", hook.SOURCES)
def test_each_source_of_a_session_start_is_read(source: str) -> None:
    got = hook.read_input(json.dumps({**INPUT, "source": source}).encode())
    assert got == hook.HookInput(INPUT["session_id"], INPUT["cwd"], source)


def test_fields_it_does_not_need_may_be_missing_or_new() -> None:
    assert hook.read_input(b"{}") == hook.HookInput()
    assert hook.read_input(b'{"model": "x", "agent_type": "y"}') == hook.HookInput()


@pytest.mark.parametrize(("raw", "why"), [
    (b"", "not JSON"), (b"not json", "not JSON"), (b"\xff\xfe", "not JSON"),
    (b"[1, 2]", "not a JSON object"), (b'"SessionStart"', "not a JSON object"),
    (b'{"hook_event_name": "PreToolUse"}', "'PreToolUse', not 'SessionStart'"),
    (b'{"session_id": 7}', "session_id must be strings"),
    (b"[" * 100_000, "not JSON"),
    (b" " * (hook.MAX_INPUT_BYTES + 1), "over"),
])
def test_input_that_is_not_the_hooks_is_refused_in_one_line(raw: bytes, why: str) -> None:
    with pytest.raises(hook.HookInputError, match=why) as err:
        hook.read_input(raw)
    assert "\n" not in str(err.value)


def test_the_output_is_claude_codes_shape_in_ascii() -> None:
    out = hook.output("Zoë 🦓")
    assert out.endswith("\n") and out.isascii()
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                      "additionalContext": "Zoë 🦓"}}


def test_the_tools_line_comes_first_and_alone_without_memory() -> None:
    assert hook.additional_context("") == hook.TOOLS_LINE
    assert hook.additional_context("[Startup context]\nx\n") == \
        hook.TOOLS_LINE + "\n\n[Startup context]\nx"
    assert "\n" not in hook.TOOLS_LINE
    for tool in ("memory_search", "memory_get", "memory_add"):
        assert tool in hook.TOOLS_LINE


def test_length_is_counted_as_claude_code_counts_it() -> None:
    assert hook.units("abc") == 3 and hook.units("é中") == 2 and hook.units("🦓") == 2
    assert hook.over_by("x" * hook.FIT) == 0 and hook.over_by("🦓" * hook.FIT) == hook.FIT
    assert hook.FIT < hook.LIMIT == 10_000
    assert hook.context_budget() + len(hook.TOOLS_LINE) + 2 == hook.FIT
