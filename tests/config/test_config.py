from pathlib import Path

import pytest

from openmemd.cli import main
from openmemd.config import ConfigError, describe, load_settings


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_match_openclaw(tmp_path):
    s = load_settings(write(tmp_path / "empty.toml", ""), env={})
    assert s.chunking.tokens == 400 and s.chunking.overlap == 80
    assert s.query.max_results == 6 and s.query.min_score == 0.35
    assert s.query.hybrid.vector_weight == 0.7 and s.query.hybrid.text_weight == 0.3
    assert s.query.hybrid.candidate_multiplier == 4
    assert s.query.mmr.lambda_ == 0.7 and not s.query.mmr.enabled
    assert s.query.temporal_decay.half_life_days == 30
    assert s.sync.watch_debounce_ms == 1500 and s.sync.reconcile_minutes == 5
    assert s.dreaming.frequency == "0 3 * * *"
    assert s.agent_ids() == ["main"]


def test_precedence_file_env_flags(tmp_path):
    cfg = write(tmp_path / "c.toml", 'workspace = "/from/file"\nstate_dir = "/state/file"\n'
                "[query]\nmax_results = 9\n")
    s = load_settings(cfg, env={})
    assert s.workspace == "/from/file" and s.query.max_results == 9
    s = load_settings(cfg, env={"OPENMEMD_WORKSPACE": "/from/env",
                                "OPENMEMD_ENDPOINT": "tcp://127.0.0.1:5999"})
    assert s.workspace == "/from/env" and s.server.endpoint == "tcp://127.0.0.1:5999"
    assert s.state_dir == "/state/file"
    s = load_settings(cfg, env={"OPENMEMD_WORKSPACE": "/from/env"},
                      overrides={"workspace": "/from/flag", "query.max_results": None})
    assert s.workspace == "/from/flag" and s.query.max_results == 9
    assert s.index_path("main") == Path("/state/file/memory/main.sqlite")


def test_config_from_env_var(tmp_path):
    cfg = write(tmp_path / "c.toml", "[chunking]\ntokens = 200\noverlap = 20\n")
    s = load_settings(env={"OPENMEMD_CONFIG": str(cfg)})
    assert s.chunking.tokens == 200 and s.config_file == str(cfg)


def test_nested_sections_and_lambda(tmp_path):
    cfg = write(tmp_path / "c.toml", "[query.mmr]\nenabled = true\nlambda = 0.5\n"
                "[query.temporal_decay]\nenabled = true\nhalf_life_days = 7\n"
                '[agents.work]\nworkspace = "/w"\n')
    s = load_settings(cfg, env={})
    assert s.query.mmr.enabled and s.query.mmr.lambda_ == 0.5
    assert s.query.temporal_decay.half_life_days == 7
    assert s.agent_ids() == ["main", "work"] and s.workspace_for("work") == Path("/w")


@pytest.mark.parametrize("body, fragment", [
    ("[query]\nmax_result = 3\n", "unknown setting 'query.max_result'"),
    ("[query]\nmax_results = \"six\"\n", "'query.max_results' must be a number"),
    ("[query]\nmin_score = 1.5\n", "'query.min_score' = 1.5 is out of range"),
    ("[chunking]\ntokens = 100\noverlap = 100\n", "'chunking.overlap'"),
    ("[embedding]\nprovider = \"magic\"\n", "'embedding.provider' must be one of"),
    ("[sync]\nwatch = \"maybe\"\n", "'sync.watch' must be true or false"),
    ("sources = [\"memory\", \"web\"]\n", "'sources' must be a non-empty list"),
    ("[dreaming]\ntimezone = \"Mars/Olympus\"\n", "not a known IANA timezone"),
    ("this is not toml", "not valid TOML"),
])
def test_bad_config_names_key_and_file(tmp_path, body, fragment):
    cfg = write(tmp_path / "bad.toml", body)
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={})
    assert fragment in str(info.value)
    assert str(cfg) in str(info.value)


def test_missing_explicit_config_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(tmp_path / "nope.toml", env={})


def test_cli_bad_config_exits_2_with_one_line(tmp_path, capsys):
    cfg = write(tmp_path / "bad.toml", "[query]\nmax_results = 0\n")
    code = main(["search", "hello", "--config", str(cfg), "--workspace", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "query.max_results" in err and str(cfg) in err


def test_describe_lists_every_setting():
    keys = {k for k, _, _ in describe()}
    assert {"chunking.tokens", "query.hybrid.vector_weight", "query.mmr.lambda",
            "embedding.api_key_env", "sync.watch_debounce_ms", "server.endpoint",
            "dreaming.deep.min_score"} <= keys


def test_a_retired_setting_loads_with_a_warning(tmp_path, capsys) -> None:
    # dreaming.deep.max_promoted_chars was replaced by a token cap: a config file written for
    # an older openmemd still loads after the upgrade, and says what replaced it.
    cfg = tmp_path / "config.toml"
    cfg.write_text("[dreaming.deep]\nmax_promoted_chars = 500\n")
    settings = load_settings(cfg)
    assert settings.dreaming.deep.max_promoted_snippet_tokens == 160
    err = capsys.readouterr().err
    assert "max_promoted_chars' is no longer used" in err and "max_promoted_snippet_tokens" in err
