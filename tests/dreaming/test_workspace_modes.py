"""Files and folders openmemd creates in a workspace are never more readable than the notes they
quote, MEMORY.md or memory/ itself, whatever the umask; existing ones keep their mode."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from test_dreaming_sweep import NOTE, SWEEP_AT, make_ws, recall_often, settings

from openmemd.dreaming import run_sweep
from openmemd.notes import append_note

LATER = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
NEW_DIRS = ("memory/.dreams", "memory/dreaming", "memory/dreaming/light", "memory/dreaming/rem",
            "memory/dreaming/deep")
REPORTS = ("memory/dreaming/light/2026-04-10.md", "memory/dreaming/rem/2026-04-10.md",
           "memory/dreaming/deep/2026-04-10.md")


@pytest.fixture
def set_umask() -> Iterator[object]:
    old = os.umask(0o022)
    try:
        yield os.umask
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


# umask, memory/'s mode, the quoted note's mode -> new reports (and MEMORY.md, the daily
# note), new folders.
CASES = [
    (0o022, 0o755, 0o644, 0o644, 0o755),
    (0o022, 0o755, 0o600, 0o600, 0o755),  # a private note: the reports quoting it too
    (0o022, 0o750, 0o640, 0o640, 0o750),
    (0o000, 0o777, 0o644, 0o644, 0o755),  # umask 000: still never group/other-writable
    (0o000, 0o777, 0o666, 0o644, 0o755),
    (0o000, 0o700, 0o644, 0o600, 0o700),  # a private memory/: nothing in it is shared
    (0o077, 0o755, 0o644, 0o600, 0o700),  # the umask still applies
    (0o027, 0o755, 0o644, 0o640, 0o750),
]


@pytest.mark.parametrize(("umask", "memory_dir", "note", "want_file", "want_dir"), CASES,
                         ids=[f"umask{c[0]:03o}-memory{c[1]:o}-note{c[2]:o}" for c in CASES])
def test_new_files_and_folders_are_no_more_readable_than_their_sources(
        tmp_path: Path, set_umask: object, umask: int, memory_dir: int, note: int,
        want_file: int, want_dir: int) -> None:
    ws = make_ws(tmp_path)
    os.chmod(ws / NOTE, note)
    os.chmod(ws / "memory", memory_dir)
    os.umask(umask)
    recall_often(ws)
    result = run_sweep(ws, settings(), now=SWEEP_AT)
    assert result.promoted  # MEMORY.md is new too, holding the note's words
    assert {rel: oct(mode(ws / rel)) for rel in (*REPORTS, "MEMORY.md")} == \
        {rel: oct(want_file) for rel in (*REPORTS, "MEMORY.md")}
    assert {rel: oct(mode(ws / rel)) for rel in NEW_DIRS} == \
        {rel: oct(want_dir) for rel in NEW_DIRS}
    daily = append_note(ws, "a later note", now=LATER)  # a new daily note beside MEMORY.md
    assert oct(mode(ws / daily.path)) == oct(want_file)
    state = [p for p in (ws / "memory/.dreams").rglob("*") if p.is_file()]
    assert state and all(mode(p) & ~0o600 == 0 for p in state), \
        [(p.name, oct(mode(p))) for p in state]
    backups = ws / "memory/.dreams/backups"
    assert not backups.exists() or mode(backups) == 0o700 & ~umask


def test_a_daily_note_is_no_more_readable_than_memory_md(workspace: Path) -> None:
    (workspace / "MEMORY.md").write_text("# Memory\n- private\n")
    os.chmod(workspace / "MEMORY.md", 0o600)
    note = append_note(workspace, "beside a private MEMORY.md", now=LATER)
    assert oct(mode(workspace / note.path)) == oct(0o600)


def test_a_missing_memory_folder_is_made_like_the_workspace(tmp_path: Path,
                                                            set_umask: object) -> None:
    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    os.umask(0)
    note = append_note(ws, "the first note", now=LATER)
    assert oct(mode(ws / "memory")) == oct(0o700)
    assert oct(mode(ws / note.path)) == oct(0o600)


def test_existing_files_keep_their_mode(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    os.chmod(ws / NOTE, 0o600)
    for rel in REPORTS:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("old\n")
        os.chmod(ws / rel, 0o644)  # the user's choice, though the note is private
    recall_often(ws)
    run_sweep(ws, settings(), now=SWEEP_AT)
    assert {rel: oct(mode(ws / rel)) for rel in REPORTS} == {rel: oct(0o644) for rel in REPORTS}
    assert all((ws / rel).read_text() != "old\n" for rel in REPORTS)
