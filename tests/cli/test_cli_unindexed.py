"""A note openmemd does not index is named, with why, by `index`, `status` and `doctor`: a
symlinked note or folder (never followed) and a file the sync skipped."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openmemd.cli import main

Run = Callable[..., tuple[int, str]]


@pytest.fixture
def run(make_settings: Any, workspace: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> Run:
    make_settings("[sync]\nmax_file_bytes = 4096\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "trip.md").write_text("- the trip to Lisbon\n")
    os.symlink(outside, workspace / "memory" / "travel")
    os.symlink(outside / "trip.md", workspace / "memory" / "trip.md")
    (workspace / "memory" / "huge.md").write_text("x" * 5000 + "\n")
    (workspace / "memory" / "2026-05-03.md").write_text("- a real note\n")

    def command(*args: str) -> tuple[int, str]:
        code = main([*args, "--config", str(tmp_path / "config.toml"),
                     "--endpoint", f"ipc://{tmp_path}/none.sock"])
        out = capsys.readouterr()
        return code, out.out + out.err

    return command


def _lines(said: str, path: str) -> list[str]:
    return [line for line in said.splitlines() if path in line]


def test_index_names_each_symlink_and_skip_once_with_why(run: Run) -> None:
    code, said = run("index")
    assert code == 0
    for link in ("memory/travel", "memory/trip.md"):
        (line,) = _lines(said, link)
        assert "symlink" in line and "outside the workspace" in line and "not followed" in line
    (line,) = _lines(said, "memory/huge.md")
    assert "4096-byte cap" in line


def test_status_says_why_a_file_is_not_indexed(run: Run) -> None:
    run("index")
    _, said = run("status")
    (line,) = _lines(said, "memory/huge.md")
    assert "4096-byte cap" in line
    for link in ("memory/travel", "memory/trip.md"):
        (line,) = _lines(said, link)
        assert "not followed" in line


def test_doctor_names_the_symlinks(run: Run) -> None:
    _, said = run("doctor")
    for link in ("memory/travel", "memory/trip.md"):
        (line,) = _lines(said, link)
        assert "not followed" in line
