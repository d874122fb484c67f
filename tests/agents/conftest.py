"""Fixtures the agent tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from openmemd.cli import main


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """`openmemd ARGS` in process with the test's config file and no daemon: (exit, stdout)."""
    def run(*args: str) -> tuple[int, str]:
        code = main([*args, "--config", str(tmp_path / "config.toml"),
                     "--endpoint", f"ipc://{tmp_path}/none.sock"])
        return code, capsys.readouterr().out
    return run
