"""What `status` reports, as records both ends read: the api builds an `IndexStatus`, the
daemon's watcher and writer their `WatchStatus` and `IndexerStatus`, an agent merges them into
an `AgentStatus` and the daemon's dispatcher answers a `DaemonStatus`. They turn into JSON
only where a reply is encoded; a reader of a reply (the CLI, MCP's memory_status) turns the
JSON back with `from_json`, tolerant of keys an older daemon did not send.

The JSON is the one `status` has always had (camelCase keys, optional keys absent rather than
null): scripts and models read it. Blobs with a record of their own elsewhere stay mappings: a
sync report (`SyncReport.to_dict`), an index recovery, the progress of long work, the store
backend's facts (each backend names its own), the request server's counters, the
ping of another daemon.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openmemd.protocol.records import (
    JsonRecord,
    field,
    not_in_json,
    omitted_if_empty,
    omitted_if_none,
    replace,
)

RUNNING = "running"  # a watcher's state while it watches (server/watcher.py)


# -- one index, as the api reads it (api/status.py) -----------------------------------------

class ProviderStatus(JsonRecord):
    """The embedding provider asked for and the one answering."""
    requested: str
    id: str
    model: str
    dims: int | None
    unavailable_reason: str | None


class FileCounts(JsonRecord):
    """Files in the workspace and in the index."""
    on_disk: int
    indexed: int
    # compared only once an index exists
    stale: int | None = omitted_if_none(default=None)
    deleted_on_disk: int | None = omitted_if_none(default=None)


class SkippedPath(JsonRecord):
    """A memory path on disk the index leaves out, and why (a symlink, a file the sync
    skipped)."""
    path: str
    reason: str


class VectorStatus(JsonRecord):
    """Whether the vector leg can answer, and how."""
    available: bool
    mode: str
    # of the vector extension, where one answers
    version: str | None = omitted_if_none(default=None)
    reason: str = ""
    dims: int | None = None
    vectors: int | None = omitted_if_none(default=None)  # counted where the vector index can count


class FtsStatus(JsonRecord):
    """Whether the keyword leg can answer, and its tokenizer."""
    available: bool
    tokenizer: str


class CacheStatus(JsonRecord):
    """The embedding cache."""
    enabled: bool
    entries: int
    max_entries: int


class LastSync(JsonRecord):
    """The last sync: when, its error, its report."""
    at: float | None
    error: str | None
    report: Mapping[str, Any] | None


class StoreFacts(JsonRecord):
    """The backend and where the index lives (no password); `facts` are the backend's own
    (`IndexStore.status()`: versions, and on PostgreSQL the namespaces and whether the
    server answers)."""

    backend: str
    location: str
    facts: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"backend": self.backend, "location": self.location, **self.facts}
        if self.error is not None:
            out["error"] = self.error
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StoreFacts:
        own = {k: v for k, v in data.items() if k not in ("backend", "location", "error")}
        return cls(str(data.get("backend", "")), str(data.get("location", "")), own,
                   data.get("error"))

    def fact(self, name: str) -> Any:
        """One of the backend's own facts (None where this backend has none)."""
        return self.facts.get(name)


class ConnectedAgent(JsonRecord):
    """Another agent on this machine whose sessions openmemd reads (Claude Code, Codex): listed
    when `openmemd connect` wired it (`connected`) or its source is on (`source_enabled`).
    `sessions`: its session files in the index; `last_read`: the newest of them's mtime as
    indexed (ISO 8601 UTC; None before any), i.e. the last session write openmemd has read."""

    agent: str
    connected: bool
    source_enabled: bool
    sessions: int
    last_read: str | None
    sessions_dir: str

    @property
    def summary(self) -> str:
        how = "connected" if self.connected else "source on, not connected"
        if self.connected and not self.source_enabled:
            how = "connected, but its source is off"
        last = self.last_read or "never"
        return (f"{how} · {self.sessions} session file(s) indexed · last read {last} "
                f"(newest indexed session's mtime) · {self.sessions_dir}")


class IndexStatus(JsonRecord):
    """One index: files on disk against the index, the provider, the vector mode, the last
    sync (`MemoryIndex.status()`)."""

    agent: str
    workspace: str
    db_path: str
    sources: tuple[str, ...]
    extra_paths: tuple[str, ...]
    provider: ProviderStatus
    search_mode: str
    recovery: Mapping[str, Any] | None  # Recovery.to_dict: a damaged index moved aside
    files: FileCounts
    chunks: int
    pending_vectors: int
    vector: VectorStatus
    fts: FtsStatus
    cache: CacheStatus
    last_sync: LastSync
    by_source: Mapping[str, Mapping[str, int]]
    index_exists: bool
    reindex_needed: tuple[str, ...]
    store: StoreFacts
    index_error: str | None = omitted_if_none(default=None)  # unreadable, or damaged and rebuilding
    skipped: tuple[SkippedPath, ...] = omitted_if_empty(default=())
    connected_agents: tuple[ConnectedAgent, ...] = omitted_if_empty(default=())


# -- the daemon's parts of one agent (server/) -----------------------------------------------

class WatchStatus(JsonRecord):
    """A watcher's state; `backend` None: nothing watches (only state and pending are
    shown)."""

    state: str
    backend: str | None = None
    error: str | None = None
    pending: int = 0
    events: int = 0
    last_event: str | None = None
    restarts: int = 0
    debounce_ms: int = 0
    overflows: int = 0
    last_overflow: str | None = None
    debounce_overflows: int = 0
    watch_failures: int = 0
    polling_subtrees: tuple[str, ...] = ()

    @classmethod
    def off(cls, state: str) -> WatchStatus:
        return cls(state)

    @property
    def summary(self) -> str:
        """The state in one word or two: `running (inotify)`, `degraded (polling)`."""
        return f"{self.state} ({self.backend})" if self.state == RUNNING else self.state

    def to_json(self) -> dict[str, Any]:
        if self.backend is None:
            return {"state": self.state, "pending": self.pending}
        return super().to_json()


class LastReconcile(JsonRecord):
    """The watcher's last reconcile (stat walk, then hashes)."""
    at: str | None
    seconds: float
    reasons: tuple[str, ...]
    force: bool
    report: Mapping[str, Any]  # SyncReport.to_dict

    @property
    def skipped(self) -> int:
        """Files the reconcile left out on purpose (too large, unreadable)."""
        return len(self.report.get("skipped") or [])


class LastBatch(JsonRecord):
    """The indexer's last batch of changed paths."""
    at: str | None
    seconds: float
    paths: int
    report: Mapping[str, Any]  # SyncReport.to_dict


class Retry(JsonRecord):
    """A retry the indexer has scheduled, and why."""
    reason: str | None
    in_seconds: float


class IndexerStatus(JsonRecord):
    """The indexer thread of one index (server/indexer.py)."""

    state: str
    queue_depth: int
    overflows: int
    reconciles: int
    last_reconcile: LastReconcile | None
    last_batch: LastBatch | None
    last_error: str | None
    last_error_at: str | None
    alive: bool
    progress: Mapping[str, Any] | None  # ProgressSnapshot.to_dict, while long work runs
    retry: Retry | None


class DreamSweep(JsonRecord):
    """One dreaming sweep."""
    started_at: str | None
    finished_at: str | None
    phase: str
    dry_run: bool
    error: str | None


class DreamingStatus(JsonRecord):
    """Dreaming for one workspace: scheduled, running, its last sweep."""
    enabled: bool
    running: bool
    last_sweep: DreamSweep | None
    left_to_openclaw: bool = omitted_if_empty(default=False, key="leftToOpenClaw")
    note: str | None = omitted_if_none(default=None)
    next_run: str | None = None  # the daemon's scheduler


class Probe(JsonRecord):
    """`status --deep`: one search proves the index answers."""

    ok: bool
    results: int | None = omitted_if_none(default=None)
    error: str | None = omitted_if_none(default=None)
    ms: float = 0.0


class ReconcileTimes(JsonRecord):
    """When the watcher reconciled last and will next."""
    last: str | None
    next: str | None


class AgentStatus(JsonRecord):
    """One agent: its index (None when it could not be opened, `error`, or its status failed,
    `status_failed`) with what the daemon adds. In JSON the index's keys are the agent's."""

    agent: str
    index: IndexStatus | None = None
    error: str | None = None
    workspace: str | None = None
    status_failed: str | None = None
    watch: WatchStatus | None = None
    indexer: IndexerStatus | None = None
    dreaming: DreamingStatus | None = None
    sessions_dir: str | None = None  # OpenClaw's transcripts, outside the workspace
    sessions_watch: WatchStatus | None = None
    restart_needed: tuple[str, ...] = ()  # settings changed since start
    probe: Probe | None = None
    reconcile: ReconcileTimes | None = None

    @property
    def index_error(self) -> str | None:
        return self.index.index_error if self.index is not None else self.status_failed

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any]
        if self.index is not None:
            out = self.index.to_json()
        elif self.status_failed is not None:
            out = {"agent": self.agent, "workspace": self.workspace,
                   "indexError": self.status_failed}
        else:
            out = {"agent": self.agent, "error": self.error}
        if self.watch is not None:
            out.update(watch=self.watch.to_json(), watcher=self.watch.summary)
        if self.indexer is not None:
            out["indexer"] = indexer = self.indexer.to_json()
            out.update(queueDepth=self.indexer.queue_depth, progress=indexer["progress"])
        if self.dreaming is not None:
            out["dreaming"] = self.dreaming.to_json()
        if self.sessions_dir is not None:
            out["sessionsDir"] = self.sessions_dir
        if self.sessions_watch is not None:
            out["sessionsWatch"] = self.sessions_watch.to_json()
        if self.restart_needed:
            out["restartNeeded"] = list(self.restart_needed)
        for name, part in (("probe", self.probe), ("reconcile", self.reconcile)):
            if part is not None:
                out[name] = part.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgentStatus:
        def part(key: str, record: type[Any]) -> Any:
            value = data.get(key)
            return record.from_json(value) if isinstance(value, Mapping) else None

        index = IndexStatus.from_json(data) if "files" in data else None
        return cls(
            str(data.get("agent", "")), index=index, error=data.get("error"),
            workspace=data.get("workspace"),
            status_failed=None if index is not None else data.get("indexError"),
            watch=part("watch", WatchStatus), indexer=part("indexer", IndexerStatus),
            dreaming=part("dreaming", DreamingStatus), sessions_dir=data.get("sessionsDir"),
            sessions_watch=part("sessionsWatch", WatchStatus),
            restart_needed=tuple(data.get("restartNeeded") or ()),
            probe=part("probe", Probe), reconcile=part("reconcile", ReconcileTimes))


# -- the daemon (server/handlers.py) or this process (api/handler.py) -------------------------

class SchedulerStatus(JsonRecord):
    """The scheduler and its jobs' next runs."""
    running: bool
    jobs: Mapping[str, str | None]  # job id -> its next run


class OtherDaemon(JsonRecord):
    """A daemon that answered but serves other workspaces (`status` without a daemon)."""

    endpoint: str
    pid: int | None
    agents: Mapping[str, Any]  # as its ping names them


class DaemonStatus(JsonRecord):
    """The `status` reply. Keys only a daemon knows (pid, uptime, scheduler, ...) are absent
    when no daemon answers; `reason` says why none does."""

    running: bool
    health: str
    problems: tuple[str, ...] | None = omitted_if_none(default=None)
    reason: str | None = omitted_if_none(default=None)
    version: str = ""
    pid: int | None = omitted_if_none(default=None)
    endpoint: str | None = omitted_if_none(default=None)
    started_at: str | None = omitted_if_none(default=None)
    uptime_seconds: float | None = omitted_if_none(default=None)
    rss_bytes: int | None = omitted_if_none(default=None)
    cpu_seconds: float | None = omitted_if_none(default=None)
    config_file: str | None = None
    config_files: tuple[str, ...] | None = omitted_if_none(default=None)
    notes: tuple[str, ...] | None = omitted_if_none(default=None)
    scheduler: SchedulerStatus | None = omitted_if_none(default=None)
    # the request server's counters
    server: Mapping[str, Any] | None = omitted_if_none(default=None)
    agents: tuple[AgentStatus, ...] = not_in_json(default=())  # by id in JSON: see to_json
    other_daemons: tuple[OtherDaemon, ...] | None = omitted_if_none(default=None)

    def agent(self, agent_id: str) -> AgentStatus | None:
        return next((a for a in self.agents if a.agent == agent_id), None)

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        others = out.pop("otherDaemons", None)
        out["agents"] = {a.agent: a.to_json() for a in self.agents}
        if others is not None:
            out["otherDaemons"] = others
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DaemonStatus:
        agents = data.get("agents") or {}
        listed = agents.values() if isinstance(agents, Mapping) else agents
        return replace(super().from_json(data), agents=tuple(
            AgentStatus.from_json(a) for a in listed if isinstance(a, Mapping)))
