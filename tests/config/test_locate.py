"""`config.locate` (what a command a running daemon answers reads of the settings) agrees with
the full settings, and parses the config file only when the file may set what it reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from openmemd.config import load_settings
from openmemd.config.locate import DEFAULT_AGENT, locate

CONFIGS = [
    '[embedding]\nprovider = "none"\n',
    'workspace = "{tmp}/ws"\nstate_dir = "{tmp}/state"\n',
    '"workspace" = "{tmp}/quoted"\n[server]\nendpoint = "ipc://{tmp}/d.sock"\n',
    'server.endpoint = "ipc://{tmp}/dotted.sock"\n',
    '[ agents.work ]\nworkspace = "{tmp}/work"\n[query]\nmax_results = 3\n',
]


@pytest.mark.parametrize("text", CONFIGS)
def test_located_as_the_full_settings_locate(tmp_path: Path, text: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(text.format(tmp=tmp_path))
    env = {"HOME": str(tmp_path / "home"), "OPENMEMD_OPENCLAW": "off"}
    light = locate(str(config), env, {})
    full = load_settings(config, env=env)
    assert light is not None
    assert light.state_path() == full.state_path()
    assert light.configured_endpoint() == full.configured_endpoint()
    assert light.agent_ids() == [DEFAULT_AGENT, *full.agents]
    for agent in light.agent_ids():
        assert light.workspace_for(agent) == full.workspace_for(agent)


def test_a_file_setting_nothing_it_reads_is_not_parsed(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[embedding]\nprovider = "none\n')  # broken, but sets no locating key
    env = {"HOME": str(tmp_path / "home"), "OPENMEMD_OPENCLAW": "off"}
    assert locate(str(config), env, {}) is not None  # the daemon answers as configured
    config.write_text('workspace = "unclosed\n')  # broken where it matters: the full path says
    assert locate(str(config), env, {}) is None
