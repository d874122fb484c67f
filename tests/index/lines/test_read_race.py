"""No byte from outside the workspace, even while a directory on the way is swapped for a
symlink to an outside directory and back (the check-then-open race), for `get` and for the
indexer's reads."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from openmemd.errors import OpenmemdError
from openmemd.index.lines.read import read_lines
from openmemd.index.scan import FileEntry, ScanScope, SkipFile, read_content

RACE_SECONDS = 3.0
INSIDE = "inside note\n"
OUTSIDE = "OUTSIDE SECRET\n"


def _flipper(race: Path, stash: Path, outside: Path, stop: threading.Event) -> None:
    """Swap `race` between the real directory and a symlink to `outside`, as fast as it can."""
    while not stop.is_set():
        os.rename(race, stash)
        os.symlink(outside, race)
        os.unlink(race)
        os.rename(stash, race)


@pytest.fixture
def race_setup(tmp_path: Path):
    ws = tmp_path / "ws"
    (ws / "memory" / "race").mkdir(parents=True)
    (ws / "memory" / "race" / "x.md").write_text(INSIDE)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text(OUTSIDE)
    stop = threading.Event()
    thread = threading.Thread(target=_flipper, args=(
        ws / "memory" / "race", ws / "memory" / ".race-stash", outside, stop), daemon=True)
    thread.start()
    yield ScanScope(ws)
    stop.set()
    thread.join(10)


def _loop(read) -> tuple[int, int]:
    """(reads that returned the inside text, reads that returned outside text)."""
    inside = leaked = 0
    deadline = time.monotonic() + RACE_SECONDS
    while time.monotonic() < deadline:
        text = read()
        if text is None:
            continue
        if "OUTSIDE" in text:
            leaked += 1
        elif text == INSIDE:
            inside += 1
    return inside, leaked


def test_get_never_returns_outside_content_while_a_directory_flips_to_a_symlink(race_setup):
    def read():
        try:
            return read_lines(race_setup, "memory/race/x.md")["text"]
        except OpenmemdError:
            return None

    inside, leaked = _loop(read)
    assert leaked == 0
    assert inside > 0  # the race really ran against readable states


def test_indexer_never_reads_outside_content_while_a_directory_flips_to_a_symlink(race_setup):
    entry = FileEntry("memory/race/x.md", "memory", 0, 0)

    def read():
        try:
            return read_content(race_setup, entry).text
        except SkipFile:
            return None

    inside, leaked = _loop(read)
    assert leaked == 0
    assert inside > 0
