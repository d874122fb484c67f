"""`openmemd connect|disconnect claude-code|codex` on fake agent homes (HOME in a temp folder):
every pre-existing setting kept, a backup first, a second run changes nothing, disconnect
undoes exactly (byte for byte when nothing else changed), malformed files refused untouched,
--dry-run writes nothing. Layouts as Claude Code 2.1 and Codex 0.17x write them
(`claude mcp add -s user`, `codex mcp add`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomllib

from openmemd.cli.main import main

CLAUDE_JSON = """{
  "numStartups": 7,
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "/usr/bin/gh-mcp",
      "args": [],
      "env": {
        "TOKEN": "x"
      }
    }
  },
  "projects": {
    "/home/me/app": {
      "allowedTools": []
    }
  }
}"""
SETTINGS_JSON = """{
  "model": "opus",
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "echo hello"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  }
}
"""
CODEX_TOML = """# my Codex settings
model = "o3"  # the one I like
approval_policy = "on-request"

[mcp_servers.docs]
# the docs server
command = "docs-mcp"
args = ["--stdio"]

[tui]
notifications = true
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
                "CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENMEMD_CONFIG", "OPENMEMD_STATE_DIR",
                "OPENMEMD_WORKSPACE", "OPENMEMD_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    return home


def fake_agents(home: Path) -> dict[Path, bytes]:
    files = {home / ".claude.json": CLAUDE_JSON, home / ".claude" / "settings.json":
             SETTINGS_JSON, home / ".codex" / "config.toml": CODEX_TOML}
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (home / ".claude.json").chmod(0o600)
    return {p: p.read_bytes() for p in files}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def backups(home: Path) -> list[Path]:
    return sorted(home.rglob("*.openmemd-backup-*"))


def openmemd_config(home: Path) -> Path:
    return home / ".config" / "openmemd" / "config.toml"


def test_connect_claude_code_merges_keeps_everything_and_backs_up(home, capsys):
    before = fake_agents(home)
    assert main(["connect", "claude-code"]) == 0
    state = json.loads((home / ".claude.json").read_text())
    assert state["numStartups"] == 7 and state["projects"] == {"/home/me/app":
                                                               {"allowedTools": []}}
    assert state["mcpServers"]["github"]["env"] == {"TOKEN": "x"}
    entry = state["mcpServers"]["openmemd"]
    assert entry["type"] == "stdio" and entry["args"] == ["mcp"] and entry["env"] == {}
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).name == "openmemd"
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus"
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"] == "notify-send done"
    groups = settings["hooks"]["SessionStart"]
    assert groups[0]["hooks"][0]["command"] == "echo hello"  # the user's hook, first still
    ours = groups[1]
    assert ours["matcher"] == "startup|resume|clear|compact"
    assert ours["hooks"][0]["command"] == f"{entry['command']} context --hook claude-code"
    assert tomllib.loads(openmemd_config(home).read_text())["sources"] == ["memory",
                                                                         "claude-code"]
    assert (home / ".codex" / "config.toml").read_bytes() == before[home / ".codex" /
                                                                   "config.toml"]
    saved = {p.name.split(".openmemd-backup-")[0]: p.read_bytes() for p in backups(home)}
    assert saved == {".claude.json": before[home / ".claude.json"],
                     "settings.json": before[home / ".claude" / "settings.json"]}
    assert (home / ".claude.json").stat().st_mode & 0o777 == 0o600  # its mode kept
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in backups(home)
               if p.name.startswith(".claude.json"))
    assert "openmemd disconnect claude-code" in capsys.readouterr().out


def test_second_connect_changes_nothing(home, capsys):
    fake_agents(home)
    assert main(["connect", "claude-code"]) == 0
    assert main(["connect", "codex"]) == 0
    after = snapshot(home)
    capsys.readouterr()
    assert main(["connect", "claude-code"]) == 0
    assert main(["connect", "codex"]) == 0
    assert snapshot(home) == after  # no write, no second backup
    assert capsys.readouterr().out.count("already connected, nothing to change") == 2


def test_disconnect_restores_every_file_byte_for_byte(home):
    before = fake_agents(home)
    assert main(["connect", "claude-code"]) == 0
    assert main(["connect", "codex"]) == 0
    assert main(["disconnect", "codex"]) == 0
    assert main(["disconnect", "claude-code"]) == 0
    for path, data in before.items():
        assert path.read_bytes() == data, path
    assert not openmemd_config(home).exists()  # openmemd created it: gone again
    assert not list((home / ".local" / "state").rglob("connected/*.json"))
    assert main(["disconnect", "claude-code"]) == 0  # twice: nothing left to remove


def test_disconnect_keeps_what_the_user_changed_meanwhile(home):
    fake_agents(home)
    assert main(["connect", "claude-code"]) == 0
    state_path, settings_path = home / ".claude.json", home / ".claude" / "settings.json"
    state = json.loads(state_path.read_text())
    state["numStartups"] = 8  # Claude Code itself rewrites the file all the time
    state["mcpServers"]["new"] = {"type": "stdio", "command": "new-mcp", "args": [], "env": {}}
    state_path.write_text(json.dumps(state, indent=2))
    settings = json.loads(settings_path.read_text())
    settings["hooks"]["SessionStart"].append({"hooks": [{"type": "command", "command": "b"}]})
    settings_path.write_text(json.dumps(settings, indent=2))
    assert main(["disconnect", "claude-code"]) == 0
    state = json.loads(state_path.read_text())
    assert state["numStartups"] == 8 and set(state["mcpServers"]) == {"github", "new"}
    hooks = json.loads(settings_path.read_text())["hooks"]
    assert [g["hooks"][0]["command"] for g in hooks["SessionStart"]] == ["echo hello", "b"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "notify-send done"


def test_a_server_entry_the_user_changed_is_left_to_them(home):
    fake_agents(home)
    assert main(["connect", "codex"]) == 0
    path = home / ".codex" / "config.toml"
    path.write_text(path.read_text().replace('args = ["mcp"]', 'args = ["mcp", "--agent", "w"]'))
    edited = path.read_bytes()
    assert main(["disconnect", "codex"]) == 0
    assert path.read_bytes() == edited


def test_codex_keeps_comments_and_order(home):
    fake_agents(home)
    assert main(["connect", "codex"]) == 0
    text = (home / ".codex" / "config.toml").read_text()
    table = tomllib.loads(text)["mcp_servers"]["openmemd"]
    ours = (f'[mcp_servers.openmemd]\ncommand = "{table["command"]}"\nargs = ["mcp"]\n\n')
    assert ours in text and text.index(ours) > text.index("[mcp_servers.docs]")
    assert text.replace(ours, "") == CODEX_TOML  # every byte of the user's, in its place
    assert table["args"] == ["mcp"] and Path(table["command"]).is_absolute()
    assert list(tomllib.loads(text)["mcp_servers"]) == ["docs", "openmemd"]


def test_agents_homes_from_their_environment(home, tmp_path, monkeypatch):
    claude_dir, codex_home = tmp_path / "claude-cfg", tmp_path / "codex-home"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_dir))
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    assert main(["connect", "claude-code"]) == 0
    assert main(["connect", "codex"]) == 0
    assert "openmemd" in json.loads((claude_dir / ".claude.json").read_text())["mcpServers"]
    assert "SessionStart" in json.loads((claude_dir / "settings.json").read_text())["hooks"]
    assert "openmemd" in tomllib.loads((codex_home / "config.toml").read_text())["mcp_servers"]
    assert not (home / ".claude.json").exists() and not (home / ".codex").exists()


def test_dry_run_prints_the_diff_and_writes_nothing(home, capsys):
    fake_agents(home)
    before = snapshot(home)
    assert main(["connect", "claude-code", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert snapshot(home) == before
    assert f"--- {home / '.claude.json'}" in out and '+    "openmemd": {' in out
    assert "+        \"matcher\": \"startup|resume|clear|compact\"," in out
    assert '+sources = ["memory", "claude-code"]' in out
    assert main(["connect", "codex"]) == 0
    after = snapshot(home)
    assert main(["disconnect", "codex", "--dry-run"]) == 0
    assert "-[mcp_servers.openmemd]" in capsys.readouterr().out
    assert snapshot(home) == after


@pytest.mark.parametrize(("name", "broken", "agent"), [
    (".claude.json", '{"mcpServers": {', "claude-code"),
    (".claude/settings.json", '{"hooks": [1,]}', "claude-code"),
    (".codex/config.toml", "model = \n[x", "codex"),
    (".claude.json", "[1, 2]", "claude-code"),
])
def test_a_malformed_file_is_refused_in_one_line_and_nothing_is_written(home, capsys, name,
                                                                        broken, agent):
    fake_agents(home)
    (home / name).write_text(broken)
    before = snapshot(home)
    assert main(["connect", agent]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(home / name) in err and "untouched" in err
    assert snapshot(home) == before  # not even the other files, nor a backup


def test_a_hook_table_of_the_wrong_kind_is_refused(home, capsys):
    fake_agents(home)
    (home / ".claude" / "settings.json").write_text('{"hooks": {"SessionStart": {}}}')
    before = snapshot(home)
    assert main(["connect", "claude-code"]) != 0
    assert "'SessionStart' is not a JSON array" in capsys.readouterr().err
    assert snapshot(home) == before


def test_existing_sources_are_kept_and_restored(home):
    config = openmemd_config(home)
    config.parent.mkdir(parents=True)
    original = '# mine\nsources = ["memory", "sessions"]  # both\n\n[query]\nmax_results = 9\n'
    config.write_text(original)
    assert main(["connect", "codex"]) == 0
    text = config.read_text()
    assert tomllib.loads(text)["sources"] == ["memory", "sessions", "codex"]
    assert text.startswith("# mine\n") and "max_results = 9" in text
    assert main(["disconnect", "codex"]) == 0
    assert config.read_text() == original


def test_killed_right_after_a_write_disconnect_still_undoes_it(home, monkeypatch):
    before = fake_agents(home)
    from openmemd.agents import connection

    real = connection.replace

    def killed(before, after):
        real(before, after)
        if before.path.parent.name != "connected":  # the record's own writes go through
            raise KeyboardInterrupt  # as if the process died right after the rename

    monkeypatch.setattr(connection, "replace", killed)
    assert main(["connect", "claude-code"]) != 0
    monkeypatch.setattr(connection, "replace", real)
    assert openmemd_config(home).exists()  # the first file was written
    assert main(["disconnect", "claude-code"]) == 0
    for path, data in before.items():
        assert path.read_bytes() == data
    assert not openmemd_config(home).exists()
    assert main(["connect", "claude-code"]) == 0  # and a new run does the whole job
    assert "openmemd" in json.loads((home / ".claude.json").read_text())["mcpServers"]
