"""Typed settings: defaults < TOML file < environment < command-line flags.

Every setting is a field of a frozen dataclass with its bounds in the field metadata, so the
file format, validation and documentation come from one place. Validation happens here, at the
edge; code below trusts a `Settings` object.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from openmemd import paths
from openmemd.settings_layers import Loaded, toml_hint  # openclaw.json < file < env < flags

DEFAULT_AGENT = "main"
SOURCES = ("memory", "sessions")


class ConfigError(ValueError):
    """A setting is unknown, of the wrong type or out of range. The message names key and file."""


def _opt(default: Any, help: str, *, min: float | None = None, max: float | None = None,
         choices: tuple[str, ...] | None = None) -> Any:
    meta = {"help": help, "min": min, "max": max, "choices": choices}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class ChunkingSettings:
    tokens: int = _opt(400, "chunk size in cl100k_base tokens", min=16, max=8000)
    overlap: int = _opt(80, "tokens repeated between consecutive chunks", min=0, max=4000)


@dataclass(frozen=True)
class HybridSettings:
    enabled: bool = _opt(True, "combine the vector and keyword legs")
    fusion: str = _opt("weighted", "how the legs are combined", choices=("weighted", "rrf"))
    vector_weight: float = _opt(0.7, "weight of the vector leg", min=0.0, max=1.0)
    text_weight: float = _opt(0.3, "weight of the keyword leg", min=0.0, max=1.0)
    candidate_multiplier: int = _opt(4, "candidates per leg = max_results x this", min=1, max=20)
    rrf_k: int = _opt(60, "reciprocal-rank fusion constant (fusion = rrf)", min=1, max=1000)


@dataclass(frozen=True)
class MmrSettings:
    enabled: bool = _opt(False, "re-rank for diversity (maximal marginal relevance)")
    # `lambda` is a Python keyword; the TOML key is `lambda`, the attribute `lambda_`.
    lambda_: float = _opt(0.7, "1 = relevance only, 0 = diversity only", min=0.0, max=1.0)


@dataclass(frozen=True)
class TemporalDecaySettings:
    enabled: bool = _opt(False, "down-weight older dated notes")
    half_life_days: float = _opt(30.0, "age at which a note's score halves", min=1.0, max=36500.0)


@dataclass(frozen=True)
class QuerySettings:
    max_results: int = _opt(6, "results returned by default", min=1, max=200)
    min_score: float = _opt(0.35, "results below this calibrated score are dropped",
                            min=0.0, max=1.0)
    hybrid: HybridSettings = field(default_factory=HybridSettings)
    mmr: MmrSettings = field(default_factory=MmrSettings)
    temporal_decay: TemporalDecaySettings = field(default_factory=TemporalDecaySettings)
    dreaming_reports: bool = _opt(False, "include dreaming's phase reports (memory/dreaming/) "
                                  "in search results; they only repeat notes")


@dataclass(frozen=True)
class EmbeddingSettings:
    provider: str = _opt("auto", "local | openai | auto (local if it loads, else none) | none",
                         choices=("auto", "local", "openai", "none"))
    model: str = _opt("", "model name; empty = the provider's default")
    base_url: str = _opt("", "OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1")
    api_key: str = _opt("", "API key sent as a Bearer token (prefer api_key_env)")
    api_key_env: str = _opt("", "environment variable holding the API key")
    timeout_seconds: float = _opt(60.0, "timeout of one remote request", min=0.1, max=3600.0)
    batch_max_tokens: int = _opt(8000, "estimated tokens per remote request", min=64,
                                 max=1_000_000)
    max_retries: int = _opt(3, "retries on 429, 5xx and timeouts", min=0, max=10)
    workers: int = _opt(0, "embedding threads; 0 = one per core", min=0, max=64)
    batch_size: int = _opt(0, "texts per embedding call; 0 = the provider's choice (local 4: "
                           "no faster in bigger batches, and edits wait less; remote 64)",
                           min=0, max=2048)
    query_cache_size: int = _opt(256, "query embeddings kept in memory", min=0, max=100_000)


@dataclass(frozen=True)
class CacheSettings:
    enabled: bool = _opt(True, "reuse embeddings of unchanged text")
    max_entries: int = _opt(100_000, "oldest entries are pruned past this; 0 = no cap",
                            min=0, max=100_000_000)


@dataclass(frozen=True)
class SyncSettings:
    watch: bool = _opt(True, "watch the workspace and re-index on change")
    watch_debounce_ms: int = _opt(1500, "quiet time per path before re-indexing it",
                                  min=0, max=600_000)
    reconcile_minutes: float = _opt(5.0, "periodic stat scan that catches missed events; 0 = off",
                                    min=0.0, max=10_080.0)
    max_file_bytes: int = _opt(5 * 1024 * 1024, "larger files are skipped with a warning",
                               min=1024, max=1024 * 1024 * 1024)
    watch_polling: bool = _opt(False, "poll instead of inotify/FSEvents (network file systems, "
                               "WSL /mnt drives, where native events do not arrive)")
    watch_poll_seconds: float = _opt(2.0, "interval of the polling watcher", min=0.1,
                                     max=3600.0)
    session_delta_bytes: int = _opt(100_000, "new transcript bytes that re-index it", min=0)
    session_delta_messages: int = _opt(50, "... or new lines; 0 = any growth", min=0)


@dataclass(frozen=True)
class LightPhaseSettings:
    enabled: bool = _opt(True, "run the light phase")
    lookback_days: int = _opt(2, "days of notes and recalls considered", min=1, max=365)
    limit: int = _opt(100, "candidates staged per run", min=0, max=10_000)
    dedupe_similarity: float = _opt(0.9, "Jaccard above which candidates merge", min=0.0, max=1.0)


@dataclass(frozen=True)
class RemPhaseSettings:
    enabled: bool = _opt(True, "run the REM phase")
    lookback_days: int = _opt(7, "days of recalls considered", min=1, max=365)
    limit: int = _opt(10, "themes reported per run", min=0, max=1000)
    min_pattern_strength: float = _opt(0.75, "minimum theme strength", min=0.0, max=1.0)


@dataclass(frozen=True)
class DeepPhaseSettings:
    enabled: bool = _opt(True, "run the deep phase (promotion into MEMORY.md)")
    limit: int = _opt(10, "promotions per run; 0 = promotion off", min=0, max=1000)
    min_score: float = _opt(0.8, "minimum promotion score", min=0.0, max=1.0)
    min_recall_count: int = _opt(3, "minimum recalls", min=0, max=100_000)
    min_unique_queries: int = _opt(3, "minimum distinct queries or days", min=0, max=100_000)
    recency_half_life_days: float = _opt(14.0, "half-life of the recency signal",
                                         min=0.1, max=36500.0)
    max_age_days: float = _opt(30.0, "entries last recalled longer ago are not promoted",
                               min=0.0, max=36500.0)
    max_memory_bytes: int = _opt(16 * 1024, "MEMORY.md size cap for promotion",
                                 min=0, max=1024 * 1024 * 1024)
    backups: int = _opt(5, "MEMORY.md backups kept", min=0, max=1000)
    max_promoted_chars: int = _opt(640, "promoted text longer than this is cut at a word "
                                   "boundary; 0 = never cut", min=0, max=100_000)


@dataclass(frozen=True)
class DreamingSettings:
    enabled: bool = _opt(True, "run the nightly dreaming sweep")
    frequency: str = _opt("0 3 * * *", "cron expression of the sweep")
    timezone: str = _opt("", "IANA timezone for the cron and day buckets; empty = local")
    light: LightPhaseSettings = field(default_factory=LightPhaseSettings)
    rem: RemPhaseSettings = field(default_factory=RemPhaseSettings)
    deep: DeepPhaseSettings = field(default_factory=DeepPhaseSettings)


@dataclass(frozen=True)
class ServerSettings:
    endpoint: str = _opt("", "ZeroMQ endpoint; empty = ipc socket in the user runtime dir")
    allow_remote: bool = _opt(False, "allow tcp:// endpoints on non-loopback addresses")
    max_message_bytes: int = _opt(1024 * 1024, "largest request accepted", min=1024,
                                  max=256 * 1024 * 1024)
    workers: int = _opt(4, "request worker threads", min=1, max=64)


@dataclass(frozen=True)
class LogSettings:
    level: str = _opt("info", "log level", choices=("debug", "info", "warning", "error"))
    format: str = _opt("auto", "console on a terminal, json otherwise",
                       choices=("auto", "console", "json"))


@dataclass(frozen=True)
class AgentSettings:
    workspace: str = _opt("", "the agent's workspace directory")
    sessions_dir: str = _opt("", "its transcripts folder (see the top-level sessions_dir)")


@dataclass(frozen=True)
class Settings:
    workspace: str = _opt("", "workspace of the default agent; empty = the platform default")
    state_dir: str = _opt("", "where indexes live; empty = the platform state dir")
    sources: list = _opt(["memory"], "memory and/or sessions")  # type: ignore[type-arg]
    extra_paths: list = _opt([], "more Markdown files or folders to index")  # type: ignore[type-arg]
    agents: dict = _opt({}, "[agents.<id>] workspace = ...")  # type: ignore[type-arg]
    sessions_dir: str = _opt("", "transcripts; empty = OpenClaw's, else <workspace>/sessions")
    citations: str = _opt("auto", "on: `Source: path#Lx-Ly` in snippets; off: no citation; "
                          "auto: the citation field only", choices=("auto", "on", "off"))
    chunking: ChunkingSettings = field(default_factory=ChunkingSettings)
    query: QuerySettings = field(default_factory=QuerySettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    cache: CacheSettings = field(default_factory=CacheSettings)
    sync: SyncSettings = field(default_factory=SyncSettings)
    dreaming: DreamingSettings = field(default_factory=DreamingSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    log: LogSettings = field(default_factory=LogSettings)
    # Where the settings came from, for error messages and `status`.
    config_file: str = field(default="", metadata={"internal": True})
    loaded: Any = field(default=None, metadata={"internal": True}, compare=False, repr=False)

    def for_agent(self, agent_id: str) -> Settings:  # openclaw.json's per-agent memorySearch
        return self.loaded.agent_settings.get(agent_id, self) if self.loaded else self

    # -- derived locations -------------------------------------------------------------------
    def state_path(self) -> Path:
        return Path(self.state_dir).expanduser() if self.state_dir else paths.state_dir()

    def agent_ids(self) -> list[str]:
        ids = list(self.agents)
        if DEFAULT_AGENT not in ids:
            ids.insert(0, DEFAULT_AGENT)
        return ids

    def workspace_for(self, agent_id: str = DEFAULT_AGENT) -> Path:
        agent = self.agents.get(agent_id)
        if agent is not None and agent.workspace:
            return Path(agent.workspace).expanduser()
        if agent_id == DEFAULT_AGENT:
            if self.workspace:
                return Path(self.workspace).expanduser()
            return paths.default_workspace()
        raise ConfigError(f"unknown agent {agent_id!r}: add [agents.{agent_id}] workspace = ... "
                          f"to {self.config_file or paths.config_file()}")

    def index_path(self, agent_id: str = DEFAULT_AGENT) -> Path:
        return self.state_path() / "memory" / f"{agent_id}.sqlite"


# -- loading ------------------------------------------------------------------------------------

_TOML_ALIASES = {"lambda": "lambda_"}
ENV_VARS = {"OPENMEMD_WORKSPACE": "workspace", "OPENMEMD_STATE_DIR": "state_dir",
            "OPENMEMD_ENDPOINT": "server.endpoint"}


def load_settings(config_file: str | os.PathLike[str] | None = None, *,
                  env: Mapping[str, str] | None = None,
                  overrides: Mapping[str, Any] | None = None) -> Settings:
    """Build settings from defaults, a TOML file, the environment and flag overrides.

    `config_file` None means `$OPENMEMD_CONFIG`, else the platform config file if it exists.
    `overrides` maps dotted keys (``"query.max_results"``) to values; None values are ignored.
    """
    env = os.environ if env is None else env
    explicit = config_file is not None or bool(env.get("OPENMEMD_CONFIG"))
    path = Path(config_file or env.get("OPENMEMD_CONFIG") or paths.config_file()).expanduser()
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}{toml_hint(path)}") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    elif explicit:
        raise ConfigError(f"{path}: config file not found")
    source = str(path) if path.is_file() else "defaults"
    loaded = Loaded.collect(env, (source, data), ENV_VARS, overrides or {},
                            lambda raw, src: _build(Settings, raw, "", src))
    settings = dataclasses.replace(loaded.settings, config_file=str(path) if path.is_file()
                                   else "", loaded=loaded)
    _check_cross_fields(settings, source)
    return settings


def default_settings() -> Settings:
    return Settings()


def _set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = data
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def _build(cls: type, data: Any, prefix: str, source: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: [{prefix.rstrip('.')}] must be a table")
    fields = {f.name: f for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = _TOML_ALIASES.get(raw_key, raw_key)
        name = f"{prefix}{raw_key}"
        if key not in fields:
            raise ConfigError(f"{source}: unknown setting {name!r}")
        kwargs[key] = _convert(fields[key], hints[key], value, name, source)
    return cls(**kwargs)


def _convert(f: dataclasses.Field, hint: Any, value: Any, name: str, source: str) -> Any:
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, f"{name}.", source)
    if f.name == "agents":
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: [agents] must be a table of [agents.<id>] tables")
        agents = {}
        for agent_id, agent_data in value.items():
            if not agent_id or not all(c.isalnum() or c in "-_" for c in agent_id):
                raise ConfigError(f"{source}: agent id {agent_id!r} must be letters, digits, "
                                  "- or _")
            agents[agent_id] = _build(AgentSettings, agent_data, f"agents.{agent_id}.", source)
        return agents
    if hint in (list, typing.List) or typing.get_origin(hint) is list:  # noqa: UP006
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{source}: {name!r} must be a list of strings, got {value!r}")
        if f.name == "sources":
            bad = [v for v in value if v not in SOURCES]
            if bad or not value:
                raise ConfigError(f"{source}: {name!r} must be a non-empty list of "
                                  f"{', '.join(SOURCES)}; got {value!r}")
        return list(value)
    meta = f.metadata
    if hint is bool:
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            value = value.lower() in ("true", "1", "yes")
        if not isinstance(value, bool):
            raise ConfigError(f"{source}: {name!r} must be true or false, got {value!r}")
        return value
    if hint in (int, float):
        if isinstance(value, str):
            try:
                value = hint(value)
            except ValueError:
                raise ConfigError(f"{source}: {name!r} must be a number, got {value!r}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{source}: {name!r} must be a number, got {value!r}")
        if hint is int and isinstance(value, float):
            if not value.is_integer():
                raise ConfigError(f"{source}: {name!r} must be a whole number, got {value!r}")
            value = int(value)
        value = hint(value)
        if value != value:  # NaN
            raise ConfigError(f"{source}: {name!r} must be a number, got nan")
        lo, hi = meta.get("min"), meta.get("max")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise ConfigError(f"{source}: {name!r} = {value!r} is out of range [{lo}, {hi}]")
        return value
    if hint is str or (isinstance(hint, types.UnionType) and str in typing.get_args(hint)):
        if not isinstance(value, (str, os.PathLike)):
            raise ConfigError(f"{source}: {name!r} must be a string, got {value!r}")
        value = os.fspath(value)
        choices = meta.get("choices")
        if choices and value not in choices:
            raise ConfigError(f"{source}: {name!r} must be one of {', '.join(choices)}; "
                              f"got {value!r}")
        return value
    raise ConfigError(f"{source}: {name!r} has an unsupported type")  # pragma: no cover


def _check_cross_fields(s: Settings, source: str) -> None:
    if s.chunking.overlap >= s.chunking.tokens:
        raise ConfigError(f"{source}: 'chunking.overlap' ({s.chunking.overlap}) must be smaller "
                          f"than 'chunking.tokens' ({s.chunking.tokens})")
    if s.dreaming.timezone:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
        try:
            ZoneInfo(s.dreaming.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"{source}: 'dreaming.timezone' = {s.dreaming.timezone!r} is not "
                              "a known IANA timezone") from None
    parts = s.dreaming.frequency.split()
    if len(parts) != 5:
        raise ConfigError(f"{source}: 'dreaming.frequency' = {s.dreaming.frequency!r} must be a "
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
