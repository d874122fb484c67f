"""The safe write under another program's settings: atomic, mode kept, and a concurrent
edit between reading and renaming detected (the other program's bytes win)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from openmemd.agents import safe_edit
from openmemd.agents.safe_edit import EditError, backup, read_state, replace


def test_replace_keeps_the_mode_and_leaves_no_temp_file(tmp_path: Path):
    path = tmp_path / "settings.json"
    path.write_text("{}")
    path.chmod(0o640)
    replace(read_state(path), b'{"a": 1}')
    assert path.read_bytes() == b'{"a": 1}'
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]


def test_a_new_file_is_private(tmp_path: Path):
    path = tmp_path / "dir" / "new.json"
    replace(read_state(path), b"{}")
    assert path.stat().st_mode & 0o777 == 0o600


def test_an_edit_made_after_reading_is_detected_and_kept(tmp_path: Path):
    path = tmp_path / ".claude.json"
    path.write_text('{"numStartups": 1}')
    before = read_state(path)
    path.write_text('{"numStartups": 2}')  # Claude Code wrote it in the meantime
    with pytest.raises(EditError, match="changed by another program"):
        replace(before, b'{"numStartups": 1, "mcpServers": {}}')
    assert path.read_text() == '{"numStartups": 2}'
    assert [p.name for p in tmp_path.iterdir()] == [".claude.json"]


def test_an_edit_during_the_write_is_detected(tmp_path: Path, monkeypatch):
    # The last check runs after the temp file is written and synced, just before the rename:
    # an edit landing while openmemd writes is caught there.
    path = tmp_path / "config.toml"
    path.write_text("a = 1\n")
    before = read_state(path)
    real_fsync = os.fsync

    def other_program_writes(fd: int) -> None:
        real_fsync(fd)
        if path.read_text() == "a = 1\n":
            path.write_text("a = 2\n")

    monkeypatch.setattr(safe_edit.os, "fsync", other_program_writes)
    with pytest.raises(EditError, match="changed by another program"):
        replace(before, b"a = 1\nb = 2\n")
    assert path.read_text() == "a = 2\n"


def test_backup_copies_bytes_and_mode_and_never_overwrites(tmp_path: Path):
    path = tmp_path / "config.toml"
    path.write_bytes(b"x = 1\n")
    path.chmod(0o600)
    first, second = backup(read_state(path)), backup(read_state(path))
    assert first and second and first != second
    assert first.read_bytes() == second.read_bytes() == b"x = 1\n"
    assert first.stat().st_mode & 0o777 == 0o600
    assert backup(read_state(tmp_path / "missing")) is None


def test_a_full_disk_is_one_clear_error_and_loses_nothing(tmp_path: Path, monkeypatch):
    path = tmp_path / "settings.json"
    path.write_text('{"model": "opus"}')
    before = read_state(path)

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(safe_edit.os, "fsync", disk_full)
    with pytest.raises(EditError, match="cannot write it: No space left on device"):
        replace(before, b'{"model": "opus", "hooks": {}}')
    assert path.read_text() == '{"model": "opus"}'
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # no temp file left
