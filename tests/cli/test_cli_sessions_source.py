"""`search --source sessions` where no transcript is searched says why, not only that nothing
was found."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openmemd.cli import main


def _search_sessions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["search", "bike", "--source", "sessions", "--config",
                 str(tmp_path / "config.toml"), "--endpoint", f"ipc://{tmp_path}/none.sock"]) == 0
    out = capsys.readouterr()
    return out.out + out.err


def test_sessions_not_in_sources(make_settings: Any, workspace: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    make_settings()
    (workspace / "memory" / "2026-05-02.md").write_text("- Bought a bike\n")
    said = _search_sessions(tmp_path, capsys)
    (line,) = [ln for ln in said.splitlines() if "transcripts" in ln]
    assert "not indexed" in line and 'sources = ["memory", "sessions"]' in line
    assert str(tmp_path / "config.toml") in line


def test_no_transcripts_in_the_folder(make_settings: Any, workspace: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    make_settings('sources = ["memory", "sessions"]\n')
    said = _search_sessions(tmp_path, capsys)
    (line,) = [ln for ln in said.splitlines() if "transcripts" in ln]
    assert f"no transcripts in {workspace / 'sessions'}" in line
