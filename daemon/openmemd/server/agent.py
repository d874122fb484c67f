"""One agent inside the daemon: its index, its indexer (the writer) and its watcher.

An agent whose workspace cannot be opened does not stop the daemon: it is kept with its error,
reported by `status` (health degraded) and answers requests with `unavailable`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

from openmemd.api.handler import probe
from openmemd.config import Settings
from openmemd.errors import OpenmemdError, UnavailableError
from openmemd.log import get_logger
from openmemd.protocol.records import replace
from openmemd.protocol.replies import AddReply, DreamReply, DreamResult, SyncReply, SyncSummary
from openmemd.protocol.status import (
    AgentStatus,
    DreamingStatus,
    DreamSweep,
    IndexStatus,
    WatchStatus,
)
from openmemd.server import openclaw_side
from openmemd.server.agent_watch import watch_agent_sessions
from openmemd.server.indexer import Indexer
from openmemd.server.served_index import ServedIndex
from openmemd.server.util import iso
from openmemd.server.watcher import Change, Watcher

log = get_logger(__name__)

IndexOpener = Callable[[Settings, str], ServedIndex]
# What shapes an open index: a reload cannot apply it to a running agent (its index would be
# rebuilt under its readers); it takes effect at the next start, and `status` says so.
RESTART_NEEDED = ("sources", "extra_paths", "chunking", "embedding", "cache")
# How long an add waits for an idle writer to write its note's keyword rows (milliseconds
# of work): enough for a search right after to find the note, never long enough to hold a
# request worker. A busy writer is not waited for at all.
ADD_WAIT_S = 0.5
RESTART_NEEDED_SYNC = ("watch", "watch_polling", "watch_poll_seconds", "max_file_bytes")


def open_memory_index(settings: Settings, agent_id: str, *,
                      long_lived: bool = False) -> ServedIndex:
    # The real index, checked against the server's view of it (mypy) right here.
    from openmemd.api.memory_index import MemoryIndex

    # workspace None: the api resolves it (and creates the platform default on first run).
    return MemoryIndex.open(None, agent_id=agent_id, config=settings, long_lived=long_lived)


class AgentRuntime:
    def __init__(self, agent_id: str, settings: Settings, *,
                 opener: IndexOpener = open_memory_index,
                 force_polling: bool = False) -> None:
        self.agent_id = agent_id
        self.settings = self._started_with = settings.for_agent(agent_id)
        self.restart_needed: list[str] = []  # settings changed since start, applied at restart
        self._opener = opener
        self._force_polling = force_polling
        self.index: ServedIndex | None = None
        self.indexer: Indexer | None = None
        self.watcher: Watcher | None = None
        self.sessions_watcher: Watcher | None = None  # OpenClaw's transcripts folder
        self.agent_watchers: list[Watcher] = []  # Claude Code's and Codex's session folders
        self.error: str | None = None
        self.workspace: Path | None = None
        self._dream_lock = threading.Lock()
        self.last_dream: DreamSweep | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def open(self) -> None:
        try:
            self.index = self._opener(self.settings, self.agent_id)
            self.workspace = Path(self.index.workspace)
        except OpenmemdError as exc:
            self.error = f"cannot open the index: {exc}"
            log.error("agent_open_failed", agent=self.agent_id, error=str(exc))

    def start(self) -> None:
        index = self.index
        if index is None:
            return
        indexer = self.indexer = Indexer(index, name=self.agent_id)
        indexer.start()
        # A reader that meets a damaged index asks the writer for a rebuild.
        index.on_damage = lambda why: indexer.request_reconcile(f"index damaged: {why}")
        # Warm the model first, then bring the index up to date, both on the writer thread so
        # the socket answers at once.
        indexer.run_job("warm-up", lambda ix: ix.warm())
        indexer.request_reconcile("start-up")
        if self.settings.sync.watch and self.workspace is not None:
            sync = self.settings.sync
            self.watcher = Watcher(self.workspace, index.is_indexed_path, indexer,
                                   debounce_ms=sync.watch_debounce_ms,
                                   force_polling=self._force_polling or sync.watch_polling,
                                   polling_interval=sync.watch_poll_seconds, name=self.agent_id)
            self.watcher.start()
            self.sessions_watcher = openclaw_side.watch_sessions(
                index.scope.sessions_dir, indexer, self.settings, self.agent_id,
                self._force_polling)
            self.agent_watchers = watch_agent_sessions(
                index.scope.agent_roots, indexer, self.settings, self.agent_id,
                self._force_polling)

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop watcher and indexer and close the index; False if the writer did not finish."""
        for watcher in (self.watcher, self.sessions_watcher, *self.agent_watchers):
            if watcher is not None:
                watcher.stop(timeout=min(timeout, 3.0))
        finished = self.indexer.stop(timeout) if self.indexer is not None else True
        if self.index is not None:
            if finished:
                try:
                    self.index.close()
                except Exception:
                    log.exception("index_close_failed", agent=self.agent_id)
            else:  # closing under a running writer could crash; SQLite's WAL keeps it safe
                log.warning("indexer_still_running_at_exit", agent=self.agent_id)
        return finished

    def check(self) -> None:
        """Periodic liveness check (daemon main loop)."""
        for watcher in (self.watcher, self.sessions_watcher, *self.agent_watchers):
            if watcher is not None:
                watcher.check()
        # A deleted or replaced index file is rebuilt at once, even if nothing searches.
        if self.index is not None and self.indexer is not None and self.index.file_replaced():
            self.indexer.request_reconcile("index file deleted or replaced")

    def reload(self, settings: Settings) -> None:
        settings = self.settings = settings.for_agent(self.agent_id)
        self.restart_needed = changed(self._started_with, settings, RESTART_NEEDED) + changed(
            self._started_with.sync, settings.sync, RESTART_NEEDED_SYNC, "sync.")
        if self.watcher is not None:
            self.watcher.set_debounce(settings.sync.watch_debounce_ms)
        if self.index is not None:
            # Query settings (max results, min score, hybrid weights, MMR, decay) are read per
            # search, so swapping the frozen Settings applies them. Anything that shapes the
            # index itself (sources, chunking, embedding) needs a restart.
            old = self.index.settings
            self.index.settings = _replace_query(old, settings)
            if (settings.query.dreaming_reports and not old.query.dreaming_reports
                    and self.indexer is not None):  # searched now: their vectors are filled
                self.indexer.request_reconcile("dreaming reports searched")

    # -- requests -------------------------------------------------------------------------
    def require_index(self) -> ServedIndex:
        if self.index is None:
            raise UnavailableError(f"agent {self.agent_id!r} is unavailable: {self.error}")
        return self.index

    def sync(self, force: bool, wait: bool, timeout: float = 3600.0) -> SyncReply:
        self.require_index()
        assert self.indexer is not None
        if not wait:
            self.indexer.request_reconcile("sync request", force=force)
            return SyncReply(queued=True, queue_depth=self.indexer.depth())
        future = self.indexer.sync(force=force)
        try:
            report = future.result(timeout)
        except FutureTimeout:
            raise UnavailableError("the sync is still running; check `openmemd status`") \
                from None
        return SyncReply(report=SyncSummary.from_json(report))

    def dream(self, phase: str, dry_run: bool) -> DreamReply:
        index = self.require_index()
        if not self._dream_lock.acquire(blocking=False):
            raise UnavailableError(f"a dreaming sweep is already running for {self.agent_id}")
        started = time.time()
        try:
            # Through the api (its settings carry this agent's dreaming settings, reloads too).
            result = index.dream(phase, dry_run)
        except Exception as exc:
            self.last_dream = DreamSweep(iso(started), iso(time.time()), phase, dry_run,
                                         str(exc))
            raise
        finally:
            self._dream_lock.release()
        self.last_dream = DreamSweep(iso(started), iso(time.time()), phase, dry_run, None)
        return DreamReply(DreamResult.from_json(result))

    def add(self, text: str, target: str) -> AddReply:
        """Append a note and hand its file to the writer thread; never wait behind the writer's
        other work (a first index, a fill: minutes). An idle writer writes the note's keyword
        rows at once (waited for, at most ADD_WAIT_S), so a search right after finds it, and
        embeds it next; a busy one takes the file between two embedding batches, and the reply
        says the note is queued. Either way the note is written: retrying would add it twice."""
        note = AddReply.from_json(self.require_index().add(text, target, sync=False))
        indexer = self.indexer
        if indexer is None:
            return replace(note, indexed=False, index_error="no writer runs for this index; "
                           "the next sync indexes the note")
        free = indexer.free()
        keywords = (indexer.run_job("add", lambda ix: ix.sync_paths([note.path],
                                                                   fill_vectors=False))
                    if free else None)
        # queued like a watcher change (the watcher may be off): embedded next, and a failed
        # write of it is retried like any other
        indexer.submit([Change(note.path, False)])
        if keywords is None:
            return replace(note, indexed=False, index_error=queued(indexer.doing()))
        try:
            keywords.result(ADD_WAIT_S)
            return replace(note, indexed=True)
        except FutureTimeout:  # the writer took up other work meanwhile; ours stays queued
            return replace(note, indexed=False, index_error=queued(indexer.doing()))
        except Exception as exc:
            log.warning("add_index_failed", agent=self.agent_id, path=note.path,
                        error=str(exc))
            return replace(note, indexed=False,
                           index_error=f"{exc}; the daemon indexes the note when it can")

    def status(self, *, deep: bool = False) -> AgentStatus:
        workspace = str(self.workspace) if self.workspace is not None else None
        if self.index is None:
            return AgentStatus(self.agent_id, error=self.error, workspace=workspace)
        index: IndexStatus | None = None
        failed = None
        try:
            index = self.index.status()
        except Exception as exc:
            log.exception("index_status_failed", agent=self.agent_id)
            failed = f"status failed: {exc}"
        dreaming = DreamingStatus(enabled=self.settings.dreaming.enabled,
                                  running=self._dream_lock.locked(), last_sweep=self.last_dream)
        sessions_dir, sessions_watch = openclaw_side.sessions_status(
            self.index.scope.sessions_dir, self.sessions_watcher)
        return AgentStatus(
            self.agent_id, index=index, workspace=workspace, status_failed=failed,
            watch=self.watcher.status() if self.watcher is not None
            else WatchStatus.off("disabled"),
            indexer=self.indexer.status() if self.indexer is not None else None,
            dreaming=openclaw_side.dreaming_status(self, dreaming), sessions_dir=sessions_dir,
            sessions_watch=sessions_watch,
            restart_needed=tuple(self.restart_needed),
            probe=probe(self.index) if deep else None)


def queued(doing: str) -> str:
    """Why an added note is not searchable yet, and that it will be (no need to add it again)."""
    return (f"queued for indexing: the indexer is busy ({doing}); a search finds the note once "
            "it gets to it (`openmemd status` shows the queue)")


def changed(old: Any, new: Any, fields: tuple[str, ...], prefix: str = "") -> list[str]:
    """The dotted keys among `fields` whose values differ, down to the changed leaves
    (`embedding.provider`, not `embedding`)."""
    out: list[str] = []
    for name in fields:
        a, b = getattr(old, name), getattr(new, name)
        if a == b:
            continue
        if dataclasses.is_dataclass(a) and not isinstance(a, type):
            out += changed(a, b, tuple(f.name for f in dataclasses.fields(a)), f"{prefix}{name}.")
        else:
            out.append(f"{prefix}{name}")
    return out


def _replace_query(old: Settings, new: Settings) -> Settings:
    return dataclasses.replace(old, query=new.query, dreaming=new.dreaming, log=new.log,
                               citations=new.citations)
