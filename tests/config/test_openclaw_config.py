"""openclaw.json as a settings layer, agents discovered from it, `openmemd config show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openclaw_fixture import make_openclaw
from openmemd.cli import main
from openmemd.config import load_settings


def test_openclaw_json_settings_are_mapped(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    s = load_settings(oc.config, env=oc.env)
    e = s.embedding
    assert e.provider == "none"  # config.toml wins over openclaw.json...
    assert e.base_url == "http://127.0.0.1:11434/v1" and e.model == "nomic-embed-text"
    assert e.api_key == "sk-ollama-secret-0123456789abcdef"
    q = s.query
    assert q.max_results == 2 and q.min_score == 0.05
    assert (q.hybrid.vector_weight, q.hybrid.text_weight, q.hybrid.candidate_multiplier) \
        == (0.6, 0.4, 5)
    assert q.mmr.enabled and q.mmr.lambda_ == 0.5
    assert q.temporal_decay.enabled and q.temporal_decay.half_life_days == 10
    assert (s.chunking.tokens, s.chunking.overlap) == (300, 40)
    assert s.sources == ["memory", "sessions"] and s.extra_paths == ["notes"]
    assert s.citations == "off"
    assert s.sync.session_delta_messages == 3
    assert s.dreaming.frequency == "0 4 * * *"
    # Agents discovered, with OpenClaw's workspaces and per-agent memorySearch.
    assert s.agent_ids() == ["main", "work"]
    assert s.workspace_for("main") == oc.workspace
    assert s.workspace_for("work") == oc.state / "workspace-work"
    work = s.for_agent("work")
    assert work.query.max_results == 4 and work.extra_paths == ["notes", "projects"]
    assert work.chunking.tokens == 300  # the defaults still apply under the agent's own
    assert s.for_agent("main") is s
    ignored = s.loaded.ignored
    assert "memorySearch.remote.headers" in ignored and "memorySearch.store.path" in ignored
    assert len(ignored) == len(set(ignored))


def test_ollama_provider_without_a_toml_override(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    empty = tmp_path / "empty.toml"
    empty.write_text("", encoding="utf-8")
    s = load_settings(empty, env=oc.env)
    assert s.embedding.provider == "openai"
    assert s.embedding.base_url == "http://127.0.0.1:11434/v1"


def test_precedence_openclaw_file_env_flag(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path, toml="[query]\nmax_results = 7\n")
    env = {**oc.env, "OPENMEMD_ENDPOINT": "tcp://127.0.0.1:5999"}
    s = load_settings(oc.config, env=env, overrides={"query.min_score": 0.2})
    assert s.query.max_results == 7  # config.toml over openclaw.json
    assert s.query.min_score == 0.2  # flag over openclaw.json
    assert s.query.hybrid.vector_weight == 0.6  # openclaw.json over the default
    assert s.server.endpoint == "tcp://127.0.0.1:5999"
    assert s.for_agent("work").query.max_results == 7  # config.toml beats per-agent too


def test_toml_agent_table_wins(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    oc = make_openclaw(tmp_path, toml=f'[agents.work]\nworkspace = "{elsewhere}"\n')
    s = load_settings(oc.config, env=oc.env)
    assert s.workspace_for("work") == elsewhere
    assert s.for_agent("work").query.max_results == 2  # OpenClaw's per-agent block not applied


def test_no_openclaw_install_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    cfg = tmp_path / "c.toml"
    cfg.write_text("", encoding="utf-8")
    plain = load_settings(cfg, env={})
    s = load_settings(cfg, env={"HOME": str(tmp_path / "home")})
    assert s == plain and s.loaded.openclaw is None and s.loaded.warning == ""
    assert s.agent_ids() == ["main"] and s.citations == "auto"


@pytest.mark.parametrize("text", [
    "{ agents: { defaults: { memorySearch: { query: { maxResults: 2, } } } ",  # bad JSON5
    '{ agents: { defaults: { memorySearch: { query: { maxResults: "many" } } } } }',
    '{ agents: { list: "main" } }',
    "[1, 2]",
])
def test_broken_openclaw_json_is_one_warning(tmp_path: Path, text: str, capsys,
                                              monkeypatch) -> None:
    oc = make_openclaw(tmp_path, toml="[query]\nmax_results = 9\n")
    oc.write_json(text)
    s = load_settings(oc.config, env=oc.env)
    assert s.query.max_results == 9 and s.query.min_score == 0.35  # its own settings
    assert s.agent_ids() == ["main"]
    assert "openclaw.json" in s.loaded.warning and "\n" not in s.loaded.warning
    for key, value in oc.env.items():
        monkeypatch.setenv(key, value)
    assert main(["config", "show", "--config", str(oc.config)]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "openclaw.json" in line]
    assert len(lines) == 1 and "Traceback" not in err


def test_config_show_origins_and_masked_key(tmp_path: Path, capsys, monkeypatch) -> None:
    oc = make_openclaw(tmp_path, toml="[query]\nmax_results = 7\n")
    for key, value in {**oc.env, "OPENMEMD_ENDPOINT": "tcp://127.0.0.1:5999"}.items():
        monkeypatch.setenv(key, value)
    assert main(["config", "show", "--json", "--config", str(oc.config),
                 "--log-level", "error"]) == 0
    out = capsys.readouterr().out
    assert "sk-ollama-secret" not in out
    info = json.loads(out)
    got = {k: v["from"] for k, v in info["settings"].items()}
    assert got["query.max_results"] == "config.toml"
    assert got["chunking.tokens"] == "openclaw.json"
    assert got["server.endpoint"] == "env" and got["log.level"] == "flag"
    assert got["dreaming.deep.limit"] == "default"
    assert info["settings"]["embedding.api_key"]["value"] == "********"
    assert info["agents"]["work"]["workspace"] == str(oc.state / "workspace-work")
    assert info["agents"]["main"]["sessionsDir"] == str(oc.sessions)
    assert info["agents"]["main"]["dreaming"] == "OpenClaw"
    assert "memorySearch.remote.headers" in info["openclaw"]["ignored"]
    assert main(["config", "show", "--config", str(oc.config), "--agent", "work"]) == 0
    text = capsys.readouterr().out
    assert "query.max_results" in text and "sk-ollama-secret" not in text


def test_agent_without_a_workspace_yet_is_not_served(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    (oc.state / "workspace-work" / "memory").rmdir()
    (oc.state / "workspace-work").rmdir()
    s = load_settings(oc.config, env=oc.env)
    assert s.agent_ids() == ["main"]
    assert any(i.startswith("agent work (its workspace") for i in s.loaded.ignored)


def test_openclaw_json_as_config_flag_explains_itself(tmp_path: Path, capsys) -> None:
    oc = make_openclaw(tmp_path)
    assert main(["config", "show", "--config", str(oc.state / "openclaw.json")]) == 2
    err = capsys.readouterr().err
    assert "not valid TOML" in err and "openmemd reads by itself" in err
    assert len(err.strip().splitlines()) == 1


def test_openclaw_layer_can_be_turned_off(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    s = load_settings(oc.config, env={**oc.env, "OPENMEMD_OPENCLAW": "off"})
    assert s.loaded.openclaw is None and s.agent_ids() == ["main"] and s.citations == "auto"


def test_agent_sources_see_the_defaults_session_memory_flag(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    oc.write_json("""{ agents: {
      defaults: { memorySearch: { experimental: { sessionMemory: true } } },
      list: [{ id: "main", memorySearch: { sources: ["memory", "sessions"] } },
             { id: "work", memorySearch: { enabled: false } }],
    } }""")
    s = load_settings(oc.config, env=oc.env)
    assert s.sources == ["memory", "sessions"]
    assert s.agent_ids() == ["main"]  # work's memory search is off: not served
