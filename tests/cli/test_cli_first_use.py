"""What a new user meets first: the bare command, a wrong agent, `config show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openmemd.cli import main
from openmemd.cli.parser import COMMANDS


def test_no_arguments_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    out = capsys.readouterr()
    said = out.out + out.err
    for name, (help_text, _) in COMMANDS.items():
        assert name in said and help_text.split()[0] in said, said


def test_an_unknown_agent_lists_the_known_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    config = tmp_path / "config.toml"
    config.write_text(f'workspace = "{tmp_path / "ws"}"\n[agents.work]\nworkspace = '
                      f'"{tmp_path / "work"}"\n[embedding]\nprovider = "none"\n',
                      encoding="utf-8")
    assert main(["status", "--agent", "nobody", "--config", str(config)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "unknown agent 'nobody'" in line and "known agents: main, work" in line


def test_config_show_prints_the_resolved_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    for var in ("HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    config = tmp_path / "config.toml"
    config.write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    assert main(["config", "show", "--config", str(config)]) == 0
    lines = {line.split("=", 1)[0].strip(): line.split("=", 1)[1]
             for line in capsys.readouterr().out.splitlines() if " = " in line}
    data = tmp_path / "xdg_data_home" / "openmemd"
    assert lines["workspace"] == f' "{data / "workspace"}"  (default)'
    assert lines["state_dir"] == f' "{tmp_path / "xdg_state_home" / "openmemd"}"  (default)'
    assert lines["sessions_dir"] == f' "{data / "workspace" / "sessions"}"  (default)'
    assert lines["server.endpoint"].startswith(' "ipc://')
    assert main(["config", "show", "--json", "--config", str(config)]) == 0
    settings = json.loads(capsys.readouterr().out)["settings"]
    assert settings["workspace"] == {"value": str(data / "workspace"), "from": "default"}
