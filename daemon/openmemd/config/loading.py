"""Loading settings: defaults < openclaw.json < TOML file < environment < flags, validated
against the fields' types and bounds (settings.py) with errors naming the key and the file."""

from __future__ import annotations

import dataclasses
import os
import sys
import types
import typing
from collections.abc import Mapping
from typing import Any

from openmemd.config.layers import Blame, Loaded  # openclaw.json < file < env < flags
from openmemd.config.locate import ENV_VARS, SOURCES, read_config, valid_agent_id
from openmemd.config.settings import AgentSettings, Settings
from openmemd.config.store_url import check_store
from openmemd.errors import ConfigError

_TOML_ALIASES = {"lambda": "lambda_"}


def load_settings(config_file: str | os.PathLike[str] | None = None, *,
                  env: Mapping[str, str] | None = None,
                  overrides: Mapping[str, Any] | None = None) -> Settings:
    """Build settings from defaults, a TOML file, the environment and flag overrides.

    `config_file` None means `$OPENMEMD_CONFIG`, else the platform config file if it exists.
    `overrides` maps dotted keys (``"query.max_results"``) to values; None values are ignored.
    """
    env = os.environ if env is None else env
    path, data = read_config(config_file, env)  # the same reading `locate` does
    source = str(path) if data is not None else "defaults"
    loaded = Loaded.collect(env, (source, data or {}), ENV_VARS, overrides or {}, _checked)
    settings: Settings = dataclasses.replace(
        loaded.settings, config_file=str(path) if data is not None else "", loaded=loaded)
    return settings


def default_settings() -> Settings:
    return Settings()


def _checked(raw: dict[str, Any], source: Blame) -> Settings:
    settings: Settings = _build(Settings, raw, "", source)
    _check_cross_fields(settings, source)
    return settings


# Settings an older openmemd had: a config file that still sets one loads, with a warning,
# instead of failing on "unknown setting" after an upgrade.
RETIRED = {
    "dreaming.deep.max_promoted_chars": "promotions are cut by tokens now: "
                                        "dreaming.deep.max_promoted_snippet_tokens (160)",
}


def _build(cls: type, data: Any, prefix: str, source: Blame) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{source(prefix.rstrip('.'))} must be a table")
    fields = {f.name: f for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = _TOML_ALIASES.get(raw_key, raw_key)
        name = f"{prefix}{raw_key}"
        if name in RETIRED:
            print(f"openmemd: warning: {source.place(name)}: {source.name(name)} is no longer "
                  f"used: {RETIRED[name]}", file=sys.stderr)
            continue
        if key not in fields:
            raise ConfigError(f"{source.place(name)}: unknown setting {source.name(name)}")
        kwargs[key] = _convert(fields[key], hints[key], value, name, source)
    return cls(**kwargs)


def _convert(f: dataclasses.Field[Any], hint: Any, value: Any, name: str, source: Blame) -> Any:
    """`value` as field `f` (type `hint`) wants it, or a ConfigError naming `name` in `source`."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, value, f"{name}.", source)
    if f.name == "agents":
        return _agents(value, name, source)
    if hint in (list, typing.List) or typing.get_origin(hint) is list:  # noqa: UP006
        return _string_list(f, value, name, source)
    if hint is bool:
        return _boolean(value, name, source)
    if hint in (int, float):
        return _number(f, hint, value, name, source)
    if hint is str or (isinstance(hint, types.UnionType) and str in typing.get_args(hint)):
        return _string(f, value, name, source)
    raise ConfigError(f"{source(name)} has an unsupported type")  # pragma: no cover


def _agents(value: Any, name: str, source: Blame) -> dict[str, AgentSettings]:
    if not isinstance(value, dict):
        raise ConfigError(f"{source(name)} must be a table of [agents.<id>] tables")
    agents = {}
    for agent_id, agent_data in value.items():
        if not valid_agent_id(agent_id):
            raise ConfigError(f"{source.place(f'agents.{agent_id}')}: agent id {agent_id!r} "
                              "must be letters, digits, - or _")
        agents[agent_id] = _build(AgentSettings, agent_data, f"agents.{agent_id}.", source)
    return agents


def _string_list(f: dataclasses.Field[Any], value: Any, name: str, source: Blame) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source(name)} must be a list of strings, got {value!r}")
    if f.name == "sources":
        bad = [v for v in value if v not in SOURCES]
        if bad or not value:
            raise ConfigError(f"{source(name)} must be a non-empty list of "
                              f"{', '.join(SOURCES)}; got {value!r}")
    return list(value)


def _boolean(value: Any, name: str, source: Blame) -> bool:
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
        value = value.lower() in ("true", "1", "yes")
    if not isinstance(value, bool):
        raise ConfigError(f"{source(name)} must be true or false, got {value!r}")
    return value


def _number(f: dataclasses.Field[Any], hint: type, value: Any, name: str,
            source: Blame) -> int | float:
    if isinstance(value, str):
        try:
            value = hint(value)
        except ValueError:
            raise ConfigError(f"{source(name)} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{source(name)} must be a number, got {value!r}")
    if hint is int and isinstance(value, float):
        if not value.is_integer():
            raise ConfigError(f"{source(name)} must be a whole number, got {value!r}")
        value = int(value)
    number: int | float = hint(value)
    if number != number:  # NaN
        raise ConfigError(f"{source(name)} must be a number, got nan")
    lo, hi = f.metadata.get("min"), f.metadata.get("max")
    if (lo is not None and number < lo) or (hi is not None and number > hi):
        raise ConfigError(f"{source(name)} = {number!r} is out of range [{lo}, {hi}]")
    return number


def _string(f: dataclasses.Field[Any], value: Any, name: str, source: Blame) -> str:
    if not isinstance(value, (str, os.PathLike)):
        raise ConfigError(f"{source(name)} must be a string, got {value!r}")
    text = os.fspath(value)
    choices = f.metadata.get("choices")
    if choices and text not in choices:
        raise ConfigError(f"{source(name)} must be one of {', '.join(choices)}; "
                          f"got {text!r}")
    return text


def _check_cross_fields(s: Settings, source: Blame) -> None:
    if s.chunking.overlap >= s.chunking.tokens:
        raise ConfigError(f"{source('chunking.overlap')} ({s.chunking.overlap}) must be smaller "
                          f"than {source.also('chunking.tokens', 'chunking.overlap')} "
                          f"({s.chunking.tokens})")
    if s.dreaming.timezone:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
        try:
            ZoneInfo(s.dreaming.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"{source('dreaming.timezone')} = {s.dreaming.timezone!r} is not "
                              "a known IANA timezone") from None
    check_store(s.store, source, agents=s.agent_ids())
    parts = s.dreaming.frequency.split()
    if len(parts) != 5:
        raise ConfigError(f"{source('dreaming.frequency')} = {s.dreaming.frequency!r} must be a "
                          "5-field cron expression, e.g. '0 3 * * *'")


def describe() -> list[tuple[str, Any, str]]:
    """(dotted key, default, help) for every setting: used by the README and `--help`."""
    rows: list[tuple[str, Any, str]] = []

    def walk(cls: type, prefix: str) -> None:
        hints = typing.get_type_hints(cls)
        inst = cls()
        for f in dataclasses.fields(cls):
            if f.metadata.get("internal"):
                continue
            key = "lambda" if f.name == "lambda_" else f.name
            if dataclasses.is_dataclass(hints[f.name]):
                walk(hints[f.name], f"{prefix}{key}.")
            else:
                rows.append((f"{prefix}{key}", getattr(inst, f.name), f.metadata.get("help", "")))

    walk(Settings, "")
    return rows
