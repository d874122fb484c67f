"""Typed settings: defaults < TOML file < environment < command-line flags.

Every setting is a field of a frozen dataclass with its bounds in the field metadata, so the
file format, validation and documentation come from one place. Validation happens at the edge
(loading.py); code below trusts a `Settings` object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmemd.config import locate
from openmemd.config.layers import Loaded
from openmemd.config.locate import DEFAULT_AGENT
from openmemd.config.openclaw_budgets import DAILY_MAX_FILE_BYTES_CAP, DAILY_TOTAL_MAX_CHARS_CAP


def _opt(default: Any, help: str, *, min: float | None = None, max: float | None = None,
         choices: tuple[str, ...] | None = None, secret: bool = False) -> Any:
    """A setting; a `secret` one (it may hold a password or key) is left out of the repr, so
    no message, log line or traceback that shows the settings shows it."""
    meta = {"help": help, "min": min, "max": max, "choices": choices}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta,
                     repr=not secret)
    return field(default=default, metadata=meta, repr=not secret)


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
    api_key: str = _opt("", "API key sent as a Bearer token (prefer api_key_env)", secret=True)
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
    # Off by default: MEMORY.md's budget is the characters the startup context loads
    # (context.bootstrap_max_chars); a 16 KiB default cut it to 16,384 of its 20,000.
    max_memory_bytes: int = _opt(0, "MEMORY.md size cap in bytes for promotion, besides its "
                                 "bootstrap budget in characters; 0 = none",
                                 min=0, max=1024 * 1024 * 1024)
    backups: int = _opt(5, "MEMORY.md backups kept", min=0, max=1000)
    max_promoted_snippet_tokens: int = _opt(160, "promoted lines longer than this many "
                                            "cl100k_base tokens are cut at a word boundary "
                                            "(OpenClaw's maxPromotedSnippetTokens); 0 = never "
                                            "cut", min=0, max=100_000)


@dataclass(frozen=True)
class DreamingSettings:
    enabled: bool = _opt(True, "run the nightly dreaming sweep")
    frequency: str = _opt("0 3 * * *", "cron expression of the sweep")
    timezone: str = _opt("", "IANA timezone for the cron and day buckets; empty = local")
    light: LightPhaseSettings = field(default_factory=LightPhaseSettings)
    rem: RemPhaseSettings = field(default_factory=RemPhaseSettings)
    deep: DeepPhaseSettings = field(default_factory=DeepPhaseSettings)


@dataclass(frozen=True)
class ContextSettings:
    """The session's startup context (`openmemd context`, memory_context): budgets of the
    files' own text; where a budget cuts, a marker line says how much was left out."""

    bootstrap_max_chars: int = _opt(20_000, "characters of USER.md and of MEMORY.md each "
                                    "(OpenClaw's bootstrapMaxChars)", min=1, max=10_000_000)
    bootstrap_total_max_chars: int = _opt(60_000, "characters of USER.md and MEMORY.md "
                                          "together (bootstrapTotalMaxChars)", min=1,
                                          max=10_000_000)
    daily_max_file_bytes: int = _opt(16_384, "bytes read of each daily note of today and "
                                     "yesterday (startupContext.maxFileBytes)", min=1,
                                     max=DAILY_MAX_FILE_BYTES_CAP)
    daily_total_max_chars: int = _opt(2_800, "characters of those daily notes together "
                                      "(startupContext.maxTotalChars)", min=1,
                                      max=DAILY_TOTAL_MAX_CHARS_CAP)


@dataclass(frozen=True)
class ServerSettings:
    endpoint: str = _opt("", "ZeroMQ endpoint; empty = ipc socket in the user runtime dir")
    allow_remote: bool = _opt(False, "allow tcp:// endpoints on non-loopback addresses")
    max_message_bytes: int = _opt(1024 * 1024, "largest request accepted", min=1024,
                                  max=256 * 1024 * 1024)
    workers: int = _opt(4, "request worker threads", min=1, max=64)


DEFAULT_DASHBOARD_PORT = 7743


@dataclass(frozen=True)
class DashboardSettings:
    port: int = _opt(DEFAULT_DASHBOARD_PORT, "the loopback web dashboard's port "
                     "(127.0.0.1 and ::1 only; `openmemd dashboard` prints its URL); 0 = off",
                     min=0, max=65535)


STORE_BACKENDS = ("sqlite", "postgres")
# `store.namespace` placeholders: one setting serves every agent of a daemon.
DEFAULT_NAMESPACE = "{hostname}/{agent}"


@dataclass(frozen=True)
class StoreSettings:
    backend: str = _opt("sqlite", "where the index lives: sqlite (one file per agent) or "
                        "postgres (a shared server; the `postgres` extra)",
                        choices=STORE_BACKENDS)
    url: str = _opt("", "postgres: libpq URL, e.g. postgresql://user@host/db (also "
                    "OPENMEMD_STORE_URL; PG* variables and ~/.pgpass apply); keep the password "
                    "out of it", secret=True)
    namespace: str = _opt(DEFAULT_NAMESPACE, "postgres: this agent's namespace; {hostname} "
                          "and {agent} are replaced")
    search_namespaces: list = _opt([], "postgres: namespaces searched (each may use "  # type: ignore[type-arg]
                                   "{hostname}/{agent}); empty = the own namespace")
    statement_timeout_ms: int = _opt(15_000, "postgres: longest a single query may run",
                                     min=100, max=3_600_000)

    def namespace_for(self, agent_id: str) -> str:
        return expand_namespace(self.namespace, agent_id)

    def search_namespaces_for(self, agent_id: str) -> tuple[str, ...]:
        if not self.search_namespaces:
            return (self.namespace_for(agent_id),)
        return tuple(dict.fromkeys(expand_namespace(n, agent_id)
                                   for n in self.search_namespaces))


def expand_namespace(template: str, agent_id: str) -> str:
    import socket

    return template.replace("{hostname}", socket.gethostname()).replace("{agent}", agent_id)


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
    sources: list[str] = _opt(["memory"], "memory and/or sessions")
    extra_paths: list[str] = _opt([], "more Markdown files or folders to index")
    agents: dict[str, AgentSettings] = _opt({}, "[agents.<id>] workspace = ...")
    sessions_dir: str = _opt("", "transcripts; empty = OpenClaw's, else <workspace>/sessions")
    citations: str = _opt("auto", "on: `Source: path#Lx-Ly` in snippets; off: no citation; "
                          "auto: the citation field only", choices=("auto", "on", "off"))
    chunking: ChunkingSettings = field(default_factory=ChunkingSettings)
    query: QuerySettings = field(default_factory=QuerySettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    cache: CacheSettings = field(default_factory=CacheSettings)
    sync: SyncSettings = field(default_factory=SyncSettings)
    dreaming: DreamingSettings = field(default_factory=DreamingSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    dashboard: DashboardSettings = field(default_factory=DashboardSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    log: LogSettings = field(default_factory=LogSettings)
    # Where the settings came from, for error messages and `status`.
    config_file: str = field(default="", metadata={"internal": True})
    loaded: Loaded | None = field(default=None, metadata={"internal": True}, compare=False,
                                  repr=False)

    def for_agent(self, agent_id: str) -> Settings:  # openclaw.json's per-agent memorySearch
        if not self.loaded:
            return self
        own: Settings = self.loaded.agent_settings.get(agent_id, self)
        return own

    # -- derived locations -------------------------------------------------------------------
    def state_path(self) -> Path:
        return locate.state_path(self.state_dir)

    def configured_endpoint(self) -> str:  # what `discovery` asks of this or a `Located`
        return self.server.endpoint

    def agent_ids(self) -> list[str]:
        ids = list(self.agents)
        if DEFAULT_AGENT not in ids:
            ids.insert(0, DEFAULT_AGENT)
        return ids

    def workspace_for(self, agent_id: str = DEFAULT_AGENT) -> Path:
        agent = self.agents.get(agent_id)
        return locate.workspace_path(agent_id, agent.workspace if agent is not None else "",
                                     self.workspace, self.config_file, self.agent_ids())

    def index_path(self, agent_id: str = DEFAULT_AGENT) -> Path:
        return locate.index_path(self.state_path(), agent_id)

