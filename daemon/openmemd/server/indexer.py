"""The indexer: the one thread per agent that owns the daemon's write path.

Everything that writes an agent's index is queued here and run on this thread, on the
`ServedIndex` it is given (`MemoryIndex`, whose `Maintainer` does the writing): debounced
watcher changes (`submit`), reconcile scans (`request_reconcile`, `sync`) and maintenance jobs
(`run_job`: cache pruning, WAL checkpoint, model warm-up). Work is held in bounded
structures: a set of pending paths (overflow drops them and asks for one reconcile instead,
which finds every change anyway), a flag for the reconcile, and a short job queue. Paths are
written in small batches so that stopping never waits for more than a few files.

Long work says how it goes: every file and embedding batch updates `progress` (phase, done,
total, rate, ETA; shown by `status`) and an `index_progress` log line is written every
PROGRESS_LOG_S. A `sync` waiter is answered once the keyword rows are written: embedding can
take hours, and the report says how many chunks still wait for a vector.

Edits first: a fill (hours on a real workspace) calls `_serve_edits` while each batch embeds:
edited files' keyword rows and deletions are committed at once, on this thread, and their
chunks embedded before the rest. An edit never waits for someone else's batch.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from openmemd.errors import UnavailableError
from openmemd.log import get_logger
from openmemd.progress import ProgressMeter, ProgressSnapshot
from openmemd.protocol.status import IndexerStatus, LastBatch, LastReconcile, Retry
from openmemd.server.served_index import ServedIndex, ServedReport
from openmemd.server.util import iso
from openmemd.server.watcher import Change

log = get_logger(__name__)

PROGRESS_LOG_S = 10.0
# A failed write (disk full, provider down, damaged index) is retried after 1 s, doubling to
# 30 s, so the index converges within seconds of the cause going away.
RETRY_FIRST_SECONDS = 1.0
# A reconcile that wrote this many chunks or vectors (a first index, a large change) runs the
# store's upkeep at once -- fresh statistics, and on PostgreSQL the vector index -- instead of
# at the next hourly one. So does the daemon's first reconcile, whatever it wrote: a store
# filled while no daemon ran (`store copy`, `openmemd index`, a daemon on another host) would
# otherwise be searched without its vector index for up to an hour.
UPKEEP_AFTER_ROWS = 1000
RETRY_MAX_SECONDS = 30.0

T = TypeVar("T")


class IndexerStopping(Exception):
    """Raised from the progress callback to abandon a long sync when the daemon stops."""


class Indexer:
    """An agent's write path in the daemon: pending paths, a reconcile flag, a job queue, and
    the thread that works them off in order."""

    def __init__(self, index: ServedIndex, *, name: str = "main", max_paths: int = 10_000,
                 batch_size: int = 64, max_jobs: int = 64) -> None:
        self._index = index
        self._name = name
        self._max_paths = max_paths
        self._batch_size = batch_size
        self._max_jobs = max_jobs
        self._cond = threading.Condition()
        self._paths: dict[str, None] = {}  # insertion-ordered set
        self._jobs: deque[tuple[str, Callable[[ServedIndex], Any], Future[Any]]] = deque()
        self._reconcile = False
        self._force = False
        self._reasons: list[str] = []
        self._waiters: list[Future[dict[str, Any]]] = []  # `sync` callers: the report
        self._stopping = False
        self._thread: threading.Thread | None = None
        # Status, read without the lock (single writer, atomic attribute swaps).
        self.state = "idle"
        self.overflows = 0
        self.last_error: str | None = None
        self.last_error_at: float | None = None
        # The failure last logged in full, per event: during an outage batch and reconcile
        # failures alternate, and each repeats its own message.
        self._logged: dict[str, str] = {}
        self.last_reconcile: LastReconcile | None = None
        self.last_batch: LastBatch | None = None
        self.reconciles = 0
        self.progress: ProgressSnapshot | None = None  # while long work runs
        self._meter = ProgressMeter()
        self._progress_logged = 0.0
        self._retry_at: float | None = None  # monotonic time of the next retry reconcile
        self._retry_delay = 0.0
        self.retry_reason: str | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"openmemd-indexer-{self._name}",
                                            daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> bool:
        """Finish the file being written, drop the rest; True when the thread has ended."""
        with self._cond:
            self._stopping = True
            pending = [f for *_, f in self._jobs] + self._waiters
            self._jobs.clear()
            self._waiters = []
            self._paths.clear()
            self._cond.notify_all()
        for fut in pending:
            if not fut.done():
                fut.set_exception(UnavailableError("the daemon is stopping"))
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- producers ------------------------------------------------------------------------
    def submit(self, changes: Sequence[Change]) -> None:
        """ChangeSink: queue debounced watcher changes."""
        with self._cond:
            if self._stopping:
                return
            new = [c.path for c in changes if c.path not in self._paths]
            if len(self._paths) + len(new) > self._max_paths:
                self._paths.clear()
                self.overflows += 1
                self._ask_reconcile_locked("indexer queue overflow", force=False)
                log.warning("indexer_overflow", agent=self._name, max_paths=self._max_paths)
            else:
                for path in new:
                    self._paths[path] = None
            self._cond.notify()

    def request_reconcile(self, reason: str, force: bool = False) -> None:
        """ChangeSink: ask for a full reconcile scan (coalesced with any already queued)."""
        with self._cond:
            if not self._stopping:
                self._ask_reconcile_locked(reason, force=force)
                self._cond.notify()

    def sync(self, force: bool = False) -> Future[dict[str, Any]]:
        """A reconcile that starts after this call; the future gets its report dict."""
        fut: Future[dict[str, Any]] = Future()
        with self._cond:
            if self._stopping:
                fut.set_exception(UnavailableError("the daemon is stopping"))
                return fut
            self._waiters.append(fut)
            self._ask_reconcile_locked("sync request", force=force)
            self._cond.notify()
        return fut

    def run_job(self, name: str, fn: Callable[[ServedIndex], T]) -> Future[T]:
        """Run `fn(index)` on the writer thread (prune, checkpoint, warm-up)."""
        fut: Future[T] = Future()
        with self._cond:
            if self._stopping:
                fut.set_exception(UnavailableError("the daemon is stopping"))
            elif len(self._jobs) >= self._max_jobs:
                fut.set_exception(UnavailableError(f"indexer job queue full ({name} dropped)"))
            else:
                self._jobs.append((name, fn, fut))
                self._cond.notify()
        return fut

    def free(self) -> bool:
        """Nothing queued and nothing running: a job given now starts at once."""
        with self._cond:
            return (not (self._jobs or self._paths or self._reconcile or self._stopping)
                    and self.state in ("idle", "waiting to retry"))

    def doing(self) -> str:
        """What the writer is busy with, in a few words ("reconciling: vectors 1200/5000")."""
        snap = self.progress
        return self.state + (f": {snap.phase} {snap.done}/{snap.total}" if snap is not None
                             else "")

    def depth(self) -> int:
        with self._cond:
            return len(self._paths) + len(self._jobs) + (1 if self._reconcile else 0)

    def status(self) -> IndexerStatus:
        retry_at = self._retry_at
        return IndexerStatus(
            state=self.state, queue_depth=self.depth(), overflows=self.overflows,
            reconciles=self.reconciles, last_reconcile=self.last_reconcile,
            last_batch=self.last_batch, last_error=self.last_error,
            last_error_at=iso(self.last_error_at), alive=self.is_alive(),
            progress=self.progress.to_dict() if self.progress is not None else None,
            retry=Retry(self.retry_reason, round(max(0.0, retry_at - time.monotonic()), 1))
            if retry_at else None)

    def _ask_reconcile_locked(self, reason: str, *, force: bool) -> None:
        self._reconcile = True
        self._force = self._force or force
        if reason not in self._reasons and len(self._reasons) < 8:
            self._reasons.append(reason)

    # -- the writer thread ----------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._retry_due() and not (self._stopping or self._jobs
                                                     or self._reconcile or self._paths):
                    self.state = "idle" if self._retry_at is None else "waiting to retry"
                    self._cond.wait(None if self._retry_at is None
                                    else max(0.01, self._retry_at - time.monotonic()))
                if self._stopping:
                    self.state = "stopped"
                    return
                action: Callable[[], None]
                if self._jobs:
                    action = functools.partial(self._do_job, *self._jobs.popleft())
                elif self._reconcile:
                    force, reasons, waiters = self._force, self._reasons, self._waiters
                    self._reconcile, self._force = False, False
                    self._reasons, self._waiters = [], []
                    # Paths queued so far are covered by the scan that starts now.
                    self._paths.clear()
                    action = functools.partial(self._do_reconcile, force, reasons, waiters)
                else:
                    action = functools.partial(self._do_batch, self._take_paths_locked())
                # not "idle" from here on, before the action names what it does (`free`)
                self.state = "starting"
            try:
                action()
            except BaseException:  # never let the writer die
                log.exception("indexer_action_failed", agent=self._name)
            finally:
                # The meter stays: a fill resumed after a reconcile starts with its last rate.
                self.progress = None

    def _take_paths_locked(self) -> list[str]:
        batch: list[str] = []
        for path in self._paths:
            batch.append(path)
            if len(batch) >= self._batch_size:
                break
        for path in batch:
            del self._paths[path]
        return batch

    def _retry_due(self) -> bool:
        if self._retry_at is None or time.monotonic() < self._retry_at:
            return False
        self._retry_at = None
        self._ask_reconcile_locked(f"retry: {self.retry_reason}", force=False)
        return True

    def _retry_later(self, reason: str) -> None:
        with self._cond:
            self._retry_delay = min(self._retry_delay * 2 or RETRY_FIRST_SECONDS,
                                    RETRY_MAX_SECONDS)
            self._retry_at = time.monotonic() + self._retry_delay
            self.retry_reason = reason
            self._cond.notify()

    def _after_write(self, *, whole: bool) -> None:
        """Vectors left pending by a provider that did not answer are retried like a failed
        write. A reconcile that succeeded has caught up with everything: the backoff ends. A
        batch that succeeded wrote only its own files, so a retry still pending (for files an
        earlier failure left behind) is not dropped but runs now: the cause has gone away."""
        if self._index.vectors_failed:
            self._retry_later("embedding provider unavailable, vectors pending")
            return
        with self._cond:
            self._retry_delay = 0.0
            if whole:
                self._retry_at, self.retry_reason = None, None
            elif self._retry_at is not None:
                self._retry_at = time.monotonic()
                self._cond.notify()

    def _failed(self, message: str, event: str, *, later: bool = True, **kw: Any) -> None:
        """Record a failure, log it (the whole story once, repeats at debug level) and
        schedule a retry."""
        repeat = self._logged.get(event) == message
        self._logged[event] = message
        self._error(message)
        if later:
            self._retry_later(message)
        else:  # one full reconcile at once; if it fails too, it retries with backoff
            self.request_reconcile("retry after failed batch")
        if repeat:
            log.debug(event, agent=self._name, error=message, retry_in=self._retry_delay)
        else:
            log.exception(event, agent=self._name, **kw)

    def _progress(self, phase: str, done: int, total: int) -> None:
        if self._stopping:
            raise IndexerStopping("daemon stopping")
        snap = self._meter.update(phase, done, total)
        if snap.elapsed_s == 0.0:
            self._progress_logged = time.monotonic()  # a new phase: first line in 10 s
        self.progress = snap
        if time.monotonic() - self._progress_logged >= PROGRESS_LOG_S:
            self._progress_logged = time.monotonic()
            log.info("index_progress", agent=self._name, phase=phase, done=done, total=total,
                     rate=None if snap.rate is None else round(snap.rate, 2),
                     eta_s=None if snap.eta_s is None else round(snap.eta_s))

    def _do_reconcile(self, force: bool, reasons: list[str],
                      waiters: list[Future[dict[str, Any]]]) -> None:
        self.state = "reconciling"
        started = time.time()

        def answer(keyword_report: ServedReport) -> None:
            # Waiters get the keyword report (with the count of chunks still waiting for a
            # vector) instead of waiting for the fill.
            data = keyword_report.to_dict()
            for fut in waiters:
                if not fut.done():
                    fut.set_result(data)

        try:  # keyword rows first (searchable at once), then the vectors
            report = self._index.sync(force=force, progress=self._progress, fill_vectors=False)
            answer(report)
            report.merge(self._fill())
        except IndexerStopping:
            log.info("indexer_reconcile_abandoned", agent=self._name)
            for fut in waiters:
                if not fut.done():
                    fut.set_exception(UnavailableError("the daemon is stopping"))
            return
        except Exception as exc:
            self._failed(f"reconcile failed: {exc}", "indexer_reconcile_failed",
                         reasons=reasons)
            for fut in waiters:
                if not fut.done():
                    fut.set_exception(exc)
            return
        self._after_write(whole=True)
        data = report.to_dict()
        self.reconciles += 1
        self.last_error = None
        self._logged.clear()
        self.last_reconcile = LastReconcile(iso(started), round(time.time() - started, 3),
                                            tuple(reasons), force, data)
        log.info("indexer_reconciled", agent=self._name, reasons=reasons,
                 seconds=self.last_reconcile.seconds, report=data)
        answer(report)
        if report.rows_written >= UPKEEP_AFTER_ROWS or self.reconciles == 1:
            try:
                self._index.checkpoint()
            except Exception as exc:  # upkeep only: the next hourly run tries again
                log.warning("indexer_upkeep_failed", agent=self._name, error=str(exc))

    def _fill(self, first: Sequence[str] = ()) -> ServedReport:
        """Embed what waits, `first` files' first; a reconcile asked for stops it (and fills)."""
        return self._index.fill_vectors(should_stop=lambda: self._stopping or self._reconcile,
                                        progress=self._progress, between=self._serve_edits,
                                        first=first)

    def _serve_edits(self) -> list[str]:
        """Commit queued paths' keyword rows and deletions now; returns the paths written."""
        served: list[str] = []
        while not self._stopping:
            with self._cond:
                batch = self._take_paths_locked()
            if not batch:
                break
            if self._index_paths(batch):
                served += batch
        return served

    def _index_paths(self, batch: list[str]) -> bool:
        """Keyword rows and deletions of `batch` (one transaction a file); False: failed."""
        started = time.time()
        try:
            report = self._index.sync_paths(batch, fill_vectors=False)
        except Exception as exc:
            self._failed(f"indexing {len(batch)} changed file(s) failed: {exc}",
                         "indexer_batch_failed", later=False, paths=batch[:10])
            return False
        self.last_error = None
        self._logged.clear()
        self.last_batch = LastBatch(iso(started), round(time.time() - started, 3), len(batch),
                                    report.to_dict())
        log.info("indexer_batch", agent=self._name, paths=batch[:10], count=len(batch),
                 seconds=self.last_batch.seconds)
        return True

    def _do_batch(self, batch: list[str]) -> None:
        self.state = "indexing"
        if not self._index_paths(batch):
            return
        self.state = "embedding"
        try:  # its own chunks first, then whatever else waits
            self._fill(first=batch)
        except IndexerStopping:
            return  # the chunks are written; the vectors are filled by the next start-up
        except Exception as exc:
            self._failed(f"embedding {len(batch)} changed file(s) failed: {exc}",
                         "indexer_batch_failed", later=False, paths=batch[:10])
            return
        self._after_write(whole=False)

    def _do_job(self, name: str, fn: Callable[[ServedIndex], Any], fut: Future[Any]) -> None:
        self.state = f"job:{name}"
        try:
            result = fn(self._index)
        except Exception as exc:
            log.exception("indexer_job_failed", agent=self._name, job=name)
            fut.set_exception(exc)
            return
        log.debug("indexer_job_done", agent=self._name, job=name)
        fut.set_result(result)

    def _error(self, message: str) -> None:
        self.last_error = message
        self.last_error_at = time.time()

