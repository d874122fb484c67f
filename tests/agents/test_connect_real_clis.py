"""What `openmemd connect` writes, read by the agents' own command lines from npm (Claude Code
2.1, Codex 0.17x; tests/agent_clis.py installs them): `claude mcp list` and `codex mcp list`
list openmemd beside the servers already there, and Claude Code's own MCP client starts
`openmemd mcp` from the entry and says "Connected". After `disconnect`, neither lists it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_connect_agents import fake_agents

from agent_clis import agent_cli

pytestmark = pytest.mark.slow

OPENMEMD = Path(sys.executable).with_name("openmemd")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    fake_agents(home)
    (tmp_path / "ws" / "memory").mkdir(parents=True)
    (tmp_path / "ws" / "MEMORY.md").write_text("# Memory\n")
    (tmp_path / "openmemd.toml").write_text('[embedding]\nprovider = "none"\n')
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "TERM") if k in os.environ}
    return {**keep, "HOME": str(home), "OPENCLAW_STATE_DIR": str(tmp_path / "no-openclaw"),
            "MCP_TIMEOUT": "60000",  # Claude Code's wait for a server's start, loaded CI
            "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1"}


def run(cmd: list[str | Path], env: dict[str, str], cwd: Path) -> str:
    out = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def connect(action: str, agent: str, env: dict[str, str], tmp_path: Path) -> None:
    run([OPENMEMD, action, agent, "--workspace", tmp_path / "ws", "--config",
         tmp_path / "openmemd.toml"], env, tmp_path)


def test_claude_mcp_list_connects_to_openmemd(env, tmp_path):
    claude = agent_cli("claude")
    connect("connect", "claude-code", env, tmp_path)
    listed = run([claude, "mcp", "list"], env, tmp_path)
    line = next((x for x in listed.splitlines() if x.startswith("openmemd:")), "")
    assert f"{OPENMEMD} mcp --workspace {tmp_path / 'ws'}" in line, listed
    assert "Connected" in line, listed
    assert "github:" in listed  # the server that was there before
    connect("disconnect", "claude-code", env, tmp_path)
    assert "openmemd" not in run([claude, "mcp", "list"], env, tmp_path)


def test_codex_mcp_list_lists_openmemd(env, tmp_path):
    codex = agent_cli("codex")
    connect("connect", "codex", env, tmp_path)
    listed = run([codex, "mcp", "list"], env, tmp_path)
    rows = {line.split()[0]: line for line in listed.splitlines() if line.strip()}
    assert "docs" in rows and "openmemd" in rows, listed
    assert str(OPENMEMD) in rows["openmemd"] and "enabled" in rows["openmemd"], listed
    connect("disconnect", "codex", env, tmp_path)
    assert "openmemd" not in run([codex, "mcp", "list"], env, tmp_path)
