"""The readers of Claude Code's and Codex's session files (fixture versions: fake_homes.py)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from fake_homes import CLAUDE_SESSION, CODEX_SESSION, OTHER_PROJECT, PROJECT, SECRET, make_homes

from openmemd.agents import claude_code_sessions, codex_sessions
from openmemd.agents.session_records import ReadState
from openmemd.index.agent_sessions import AppendReader, parse, render_bytes

WHEN = datetime(2026, 12, 4, 15, 0, tzinfo=timezone.utc)


def test_claude_code_lines_labels_and_metadata(tmp_path: Path) -> None:
    files = make_homes(tmp_path, WHEN, WHEN)
    lines, state = claude_code_sessions.read(files["claude"].read_bytes(), ReadState())
    shown = [(m.line, m.label, m.text) for m in lines]
    assert shown[0] == (1, "Summary", "Billing retry policy")
    assert (3, "Tool call", "Bash: grep -rn quokka src/billing") in shown
    assert all("zanzibar" not in t and "hmm" not in t for _, _, t in shown)  # results, snapshots
    assert {m.session for m in lines[1:]} == {CLAUDE_SESSION}
    assert {m.project for m in lines[1:]} == {PROJECT}
    assert lines[1].timestamp_ms == int(WHEN.timestamp() * 1000)
    assert dict(state.unknown) == {"brand-new-record-kind": 1}
    # the torn last line is not read: the next read starts at it
    data = files["claude"].read_bytes()
    assert state.offset == data.rfind(b"\n") + 1 and state.bad == 0


def test_codex_messages_once_tool_calls_and_compaction(tmp_path: Path) -> None:
    files = make_homes(tmp_path, WHEN, WHEN)
    lines, state = codex_sessions.read(files["codex"].read_bytes(), ReadState())
    shown = [(m.line, m.label, m.text) for m in lines]
    assert shown == [
        (3, "User", "Plant the marigolds beside the tomatoes."),
        (6, "Tool call", "shell: bash -lc ls beds"),
        (8, "Assistant", "Marigolds deter aphids; the garden plan uses the pelican layout."),
        (10, "Compaction summary", "Summary: garden beds planned with the pelican layout."),
    ]
    assert {(m.session, m.project) for m in lines} == {(CODEX_SESSION, OTHER_PROJECT)}
    assert dict(state.unknown) == {"future_record": 1}


def test_subagent_file_is_marked(tmp_path: Path) -> None:
    files = make_homes(tmp_path, WHEN, WHEN)
    rel = f"claude-code/{files['subagent'].relative_to(files['home'] / '.claude/projects')}"
    lines, _ = parse("claude-code", rel, files["subagent"].read_bytes())
    assert [m.label for m in lines] == ["Subagent assistant"]


def test_rendered_lines_mask_the_secret(tmp_path: Path) -> None:
    files = make_homes(tmp_path, WHEN, WHEN)
    text = render_bytes("claude-code", "claude-code/x/s.jsonl", files["claude"].read_bytes()).text
    assert SECRET not in text and "sk-liv…3456" in text


def test_bad_lines_are_counted_and_never_fatal() -> None:
    data = b'not json\n[1, 2]\n{"type": "summary", "summary": "still read"}\n'
    lines, state = claude_code_sessions.read(data, ReadState())
    assert [m.text for m in lines] == ["still read"] and state.bad == 2


def test_append_reader_reads_on_and_starts_over_on_rewrite(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    (root / "p").mkdir(parents=True)
    path = root / "p" / "s.jsonl"
    path.write_bytes(b'{"type": "summary", "summary": "first"}\n{"type": "summ')
    reader = AppendReader()
    first, _ = reader.read(root, "claude-code", "claude-code/p/s.jsonl")
    assert first.text == "Summary: first"
    with path.open("ab") as fh:  # the torn line completes, another is appended
        fh.write(b'ary", "summary": "second"}\n{"type": "summary", "summary": "third"}\n')
    held = reader._held["claude-code/p/s.jsonl"]
    grown, _ = reader.read(root, "claude-code", "claude-code/p/s.jsonl")
    assert grown.text == "Summary: first\nSummary: second\nSummary: third"
    assert grown.line_map == (1, 2, 3) and reader._held["claude-code/p/s.jsonl"] is not held
    # rewritten in place, same length or longer: the prefix changed, so it is read whole
    path.write_bytes(b'{"type": "summary", "summary": "FIRST"}\n' + path.read_bytes()[40:])
    redone, _ = reader.read(root, "claude-code", "claude-code/p/s.jsonl")
    assert redone.text.startswith("Summary: FIRST")
    path.write_bytes(b'{"type": "summary", "summary": "short"}\n')  # truncated
    assert reader.read(root, "claude-code", "claude-code/p/s.jsonl")[0].text == "Summary: short"
