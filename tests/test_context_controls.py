"""The startup context carries no control byte (issue 43, item 6): a binary note is skipped as
the indexer skips it, in the indexer's words, and named in the block; every text that goes in
(notes, MEMORY.md, file names) loses its control characters and escape sequences, before the
budgets count it. The files on disk are left as they are."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hostile_notes import (
    BINARY_WHY,
    CONTROL,
    HOSTILE,
    HOSTILE_SHOWN,
    TODAY,
    YESTERDAY,
    controls_in,
    hostile_workspace,
)
from openmemd.context import startup_context
from openmemd.index.scan import FileEntry, ScanScope, SkipFile, read_content
from openmemd.text.controls import escape_controls, strip_controls


def test_strip_controls_removes_whole_sequences_and_keeps_text() -> None:
    assert strip_controls(HOSTILE) == HOSTILE_SHOWN + "\n"
    assert strip_controls("x\x1b]0;never ended\nnext") == "x\nnext"  # at most the line goes
    assert strip_controls("\x1b]2;t\x1b[1mz") == "z"  # a string cut short by another escape
    assert strip_controls("日本語\tok — ½ ✓") == "日本語\tok — ½ ✓"
    assert escape_controls("a\x1b[1mb\nc\x00") == "a\\x1b[1mb\\x0ac\\x00"


def test_linear_on_many_unended_sequences() -> None:
    text = "\x1b]" + "1" * 200 + ("\x1b[" + "2" * 50) * 2000
    assert not CONTROL.search(strip_controls(text))  # returns at once (no backtracking)


def test_a_hostile_workspace_gives_a_context_without_a_control_byte(make_settings,
                                                                   workspace: Path) -> None:
    hostile_workspace(workspace)
    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    ctx = startup_context(workspace, make_settings(), TODAY)
    reply = ctx.to_dict()
    assert controls_in(reply) == [] and not CONTROL.search(ctx.text)
    shown = {f.path: f.text for f in ctx.files}
    assert shown[f"memory/{TODAY}.md"] == HOSTILE_SHOWN
    assert shown["MEMORY.md"].endswith("filler line\nnulhere bold")
    assert shown[f"memory/{TODAY}-\\x1b[31mred.md"] == "named in red"
    # the binary note: skipped in the indexer's words, named in the block in one line
    assert ctx.skipped == ((f"memory/{YESTERDAY}.md", BINARY_WHY),)
    assert f"memory/{YESTERDAY}.md" not in shown and "secret pixels" not in ctx.text
    (line,) = [ln for ln in ctx.text.splitlines() if ln.startswith("[… skipped")]
    assert line == f"[… skipped: memory/{YESTERDAY}.md — {BINARY_WHY}]"
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == before


def test_budgets_count_the_text_as_sent(make_settings, workspace: Path) -> None:
    (workspace / "memory" / f"{TODAY}.md").write_text("\x1b[31m" * 30 + "0123456789\n")
    ctx = startup_context(workspace, make_settings(
        "[context]\ndaily_total_max_chars = 10\n"), TODAY)
    (note,) = ctx.files
    assert note.text == "0123456789" and not note.truncated
    assert note.to_dict()["includedChars"] == 10 and note.size == 161


def test_a_workspace_of_only_a_binary_note_still_says_so(make_settings,
                                                         workspace: Path) -> None:
    (workspace / "memory" / f"{TODAY}.md").write_bytes(b"\x00\x01\x02")
    ctx = startup_context(workspace, make_settings(), TODAY)
    assert ctx.files == () and f"[… skipped: memory/{TODAY}.md — {BINARY_WHY}]" in ctx.text


def _write_raw(ws: Path, rel: bytes, data: bytes) -> str:
    fd = os.open(bytes(ws) + b"/" + rel, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return rel.decode("utf-8", "surrogateescape")


@pytest.mark.parametrize(("name", "data"), [
    (f"memory/{TODAY}.md".encode(), b"\x00starts binary\n"),
    (f"memory/{TODAY}.md".encode(), b"a" * 8191 + b"\x00\n"),  # the last byte of the probe
    (f"memory/{TODAY}.md".encode(), b"a\n" * 4096 + b"\x00 past the probe\n"),
    (f"memory/{TODAY}-caf".encode() + b"\xe9.md", b"latin-1 name\n"),
    (f"memory/{TODAY}.md".encode(), b"caf\xe9 is not UTF-8\n"),  # read, with U+FFFD
], ids=["nul-first", "nul-at-8191", "nul-at-8192", "name-not-utf8", "text-not-utf8"])
def test_the_context_skips_what_the_indexer_skips_in_its_words(
        make_settings, workspace: Path, name: bytes, data: bytes) -> None:
    rel = _write_raw(workspace, name, data)
    try:
        read_content(ScanScope(workspace), FileEntry(rel, "memory", 0, len(data)))
        indexer_skips = None
    except SkipFile as exc:
        indexer_skips = str(exc)
    ctx = startup_context(workspace, make_settings(
        "[context]\ndaily_max_file_bytes = 100\n"), TODAY)  # less than the probe reads
    skipped = dict(ctx.skipped)
    assert len(skipped) == (indexer_skips is not None) and len(ctx.files) == (not skipped)
    if indexer_skips:
        assert list(skipped.values()) == [indexer_skips]
    assert not CONTROL.search(ctx.text) and controls_in(ctx.to_dict()) == []
