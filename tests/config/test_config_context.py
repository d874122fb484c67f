"""The startup context's budgets: the [context] table, its bounds, and OpenClaw's own keys
in openclaw.json (agents.defaults.bootstrapMaxChars, ..., startupContext.*)."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_fixture import make_openclaw
from openmemd.config import ConfigError, describe, load_settings
from openmemd.config.layers import origins_for


def test_context_table_defaults_are_openclaws_and_every_budget_is_described(
        tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("", encoding="utf-8")  # not the machine's own config file
    c = load_settings(cfg, env={}).context
    assert (c.bootstrap_max_chars, c.bootstrap_total_max_chars, c.daily_max_file_bytes,
            c.daily_total_max_chars) == (20_000, 60_000, 16_384, 2_800)
    keys = {k for k, _, _ in describe()}
    assert {"context.bootstrap_max_chars", "context.bootstrap_total_max_chars",
            "context.daily_max_file_bytes", "context.daily_total_max_chars"} <= keys


@pytest.mark.parametrize("line, fragment", [
    ("daily_max_file_bytes = 65537", "out of range [1, 65536]"),
    ("daily_total_max_chars = 50001", "out of range [1, 50000]"),
    ("bootstrap_max_chars = 0", "out of range"),
    ("daily_budget = 3", "unknown setting 'context.daily_budget'"),
])
def test_context_budgets_are_bounded_by_openclaws_caps(tmp_path: Path, line: str,
                                                        fragment: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[context]\n{line}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        load_settings(cfg, env={})


def test_openclaws_budget_keys_are_read_from_agents_defaults(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    oc.write_json('{agents: {defaults: {bootstrapMaxChars: 12000, bootstrapTotalMaxChars: '
                  '30000, startupContext: {maxFileBytes: 8192, maxTotalChars: 4000.7}}}}')
    s = load_settings(oc.config, env=oc.env)
    assert s.loaded is not None and s.loaded.warning == ""
    c = s.context
    assert (c.bootstrap_max_chars, c.bootstrap_total_max_chars, c.daily_max_file_bytes,
            c.daily_total_max_chars) == (12_000, 30_000, 8_192, 4_000)
    assert origins_for(s.loaded, "main")["context.bootstrap_max_chars"] == "openclaw.json"
    assert s.for_agent("work").context.daily_max_file_bytes == 8_192  # under every agent


def test_openclaws_startup_values_are_clamped_as_openclaw_does(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    oc.write_json('{agents: {defaults: {startupContext: {maxFileBytes: 1000000, '
                  'maxTotalChars: "lots"}}}}')
    s = load_settings(oc.config, env=oc.env)
    assert s.loaded is not None and s.loaded.warning == ""
    assert s.context.daily_max_file_bytes == 64 * 1024  # OpenClaw's cap
    assert s.context.daily_total_max_chars == 2_800  # not a number: OpenClaw's default


def test_a_bad_bootstrap_budget_names_openclaws_key(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    oc.write_json('{agents: {defaults: {bootstrapMaxChars: "big"}}}')
    s = load_settings(oc.config, env=oc.env)
    assert s.loaded is not None
    assert "agents.defaults.bootstrapMaxChars" in s.loaded.warning
    assert s.context.bootstrap_max_chars == 20_000  # the file is set aside, as for any key


def test_config_toml_wins_over_openclaw_json(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path, "[context]\nbootstrap_max_chars = 500")
    oc.write_json('{agents: {defaults: {bootstrapMaxChars: 12000}}}')
    assert load_settings(oc.config, env=oc.env).context.bootstrap_max_chars == 500
