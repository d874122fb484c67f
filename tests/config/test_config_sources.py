"""Bad settings name where they were set: the file (openclaw.json, config.toml, the
environment) and the key as that place spells it; openclaw.json that cannot be used is one
`openmemd: warning:` line, never a traceback, whatever is wrong with it (a lone surrogate, its
size)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openclaw_fixture import FakeOpenClaw, make_openclaw
from openmemd.cli import main
from openmemd.config import ConfigError, load_settings


def _cli(oc: FakeOpenClaw, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    for key, value in oc.env.items():
        monkeypatch.setenv(key, value)
    code = main([*args, "--config", str(oc.config), "--endpoint", f"ipc://{tmp_path}/no.sock"])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(("text", "key"), [
    ('{"agents": {"defaults": {"workspace": "/tmp/x\\ud800y"}}}', "agents.defaults.workspace"),
    ('{"agents": {"list": [{"id": "main"}, {"id": "work", "workspace": "\\udfff"}]}}',
     "agents.list[1].workspace"),
    ('{"agents": {"defaults": {"memorySearch": {"extraPaths": ["ok", "\\ud83d"]}}}}',
     "agents.defaults.memorySearch.extraPaths[1]"),
])
@pytest.mark.parametrize("command", [["status"], ["index"], ["config", "show"]])
def test_a_lone_surrogate_is_one_line_naming_the_key(
        text: str, key: str, command: list[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    oc = make_openclaw(tmp_path)
    oc.write_json(text)
    code, _, err = _cli(oc, tmp_path, monkeypatch, capsys, *command)
    assert "Traceback" not in err
    path = oc.state / "openclaw.json"
    (line,) = err.splitlines()
    assert line.startswith(f"openmemd: warning: {path}: '{key}' is not text: it holds the lone "
                           "surrogate '\\ud") and line.endswith("'; ignored")
    assert code == {"status": 2, "index": 0, "config": 0}[command[0]]  # as for any bad value


def test_a_bad_dreaming_cron_in_openclaw_json_is_blamed_on_it(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    text = (oc.state / "openclaw.json").read_text(encoding="utf-8")
    oc.write_json(text.replace('frequency: "0 4 * * *"', 'frequency: "every night"'))
    s = load_settings(oc.config, env=oc.env)  # not a start-up error: OpenClaw's file, skipped
    warning = s.loaded.warning
    assert warning.startswith(f"{oc.state / 'openclaw.json'}: "
                              "'plugins.entries.memory-core.config.dreaming.frequency' = "
                              "'every night' must be a 5-field cron expression")
    assert "config.toml" not in warning and s.dreaming.frequency == "0 3 * * *"


def test_an_agents_own_bad_value_names_its_entry(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    text = (oc.state / "openclaw.json").read_text(encoding="utf-8")
    oc.write_json(text.replace("query: { maxResults: 4 }", "query: { maxResults: 0 }"))
    warning = load_settings(oc.config, env=oc.env).loaded.warning
    assert "'agents.list[1].memorySearch.query.maxResults' = 0 is out of range" in warning


def test_each_layer_is_named_in_its_own_words(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path, toml="[chunking]\noverlap = 350\n")
    with pytest.raises(ConfigError) as info:  # 350 from config.toml, tokens 300 from OpenClaw
        load_settings(oc.config, env=oc.env)
    assert str(info.value) == (
        f"{oc.config}: 'chunking.overlap' (350) must be smaller than "
        f"'agents.defaults.memorySearch.chunking.tokens' ({oc.state / 'openclaw.json'}) (300)")
    oc = make_openclaw(tmp_path / "env")
    with pytest.raises(ConfigError) as info:
        load_settings(oc.config, env={**oc.env, "OPENMEMD_STORE_URL": "nonsense"})
    assert str(info.value).startswith("environment: 'OPENMEMD_STORE_URL' = 'nonsense' is not "
                                      "a libpq connection string")
    bad = tmp_path / "bad.toml"
    bad.write_text('[dreaming]\nfrequency = "daily"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(bad, env={})
    assert str(info.value).startswith(f"{bad}: 'dreaming.frequency' = 'daily' must be")


def test_a_huge_openclaw_json_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    oc = make_openclaw(tmp_path)
    # Valid JSON5 (a comment first, so not plain JSON), twice the 256 KiB cap: json5 alone
    # would spend seconds on it, and every command that loads settings would wait.
    pad = json.dumps(["x" * 1000] * 512)
    oc.write_json(f'// big\n{{ agents: {{ defaults: {{ workspace: "/nowhere" }} }}, pad: {pad} }}')
    code, _, err = _cli(oc, tmp_path, monkeypatch, capsys, "config", "show", "--json")
    size = (oc.state / "openclaw.json").stat().st_size
    assert err.splitlines() == [f"openmemd: warning: {oc.state / 'openclaw.json'}: {size} bytes, "
                                "over the 256 KiB openmemd reads (OpenClaw's own is a few KB); "
                                "ignored"]
    assert code == 0


def test_plain_json_and_json5_give_the_same_layer(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    json5_settings = load_settings(oc.config, env=oc.env)
    import json5

    data = json5.loads((oc.state / "openclaw.json").read_text(encoding="utf-8"))
    oc.write_json(json.dumps(data))
    assert load_settings(oc.config, env=oc.env) == json5_settings


def test_a_broken_openclaw_json_is_an_openmemd_line_not_a_log_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    oc = make_openclaw(tmp_path)
    oc.write_json("{ agents: ")
    code, _, err = _cli(oc, tmp_path, monkeypatch, capsys, "status")
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"openmemd: warning: {oc.state / 'openclaw.json'}: not valid JSON5 (")


def test_status_names_the_files_in_effect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    oc = make_openclaw(tmp_path)
    code, out, _ = _cli(oc, tmp_path, monkeypatch, capsys, "status")
    assert code == 2
    assert f"Config: {oc.state / 'openclaw.json'} + {oc.config}" in out.splitlines()
    _, out, _ = _cli(oc, tmp_path, monkeypatch, capsys, "status", "--json")
    assert json.loads(out)["configFiles"] == [str(oc.state / "openclaw.json"), str(oc.config)]


def test_config_show_of_an_agent_shows_its_own_workspace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    oc = make_openclaw(tmp_path)
    _, out, _ = _cli(oc, tmp_path, monkeypatch, capsys, "config", "show", "--agent", "work",
                     "--json")
    workspace = json.loads(out)["settings"]["workspace"]
    assert workspace == {"value": str(oc.state / "workspace-work"), "from": "openclaw.json"}
    _, out, _ = _cli(oc, tmp_path, monkeypatch, capsys, "config", "show", "--agent", "work")
    line = next(line for line in out.splitlines() if line.strip().startswith("workspace "))
    assert str(oc.state / "workspace-work") in line and str(oc.workspace) + '"' not in line


def test_openclaws_max_promoted_snippet_tokens_is_read(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    text = (oc.state / "openclaw.json").read_text(encoding="utf-8")
    oc.write_json(text.replace('frequency: "0 4 * * *"', 'frequency: "0 4 * * *", '
                               "phases: { deep: { maxPromotedSnippetTokens: 90 } }"))
    s = load_settings(oc.config, env=oc.env)
    assert s.dreaming.deep.max_promoted_snippet_tokens == 90
    assert s.loaded.warning in ("", None)
