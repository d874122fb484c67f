"""The single-writer indexer thread, against a recording index (our own stand-in).

`FakeIndex` is a complete `ServedIndex` (tests/test_types.py runs mypy on this file, so a
member the server starts to use and the fake lacks fails there), not a partial stand-in that
production code has to bend to.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from helpers import logged, wait_for
from openmemd.config import Settings
from openmemd.errors import NotFoundError, UnavailableError
from openmemd.progress import Progress
from openmemd.protocol.replies import Hit, SearchReply
from openmemd.protocol.status import IndexStatus
from openmemd.server.agent import AgentRuntime
from openmemd.server.indexer import Indexer
from openmemd.server.served_index import ServedIndex
from openmemd.server.watcher import Change


@dataclass
class FakeReport:
    data: dict[str, Any] = field(default_factory=dict)
    vectors: int = 0  # vectors embedded, summed by `merge` like the real report

    @property
    def rows_written(self) -> int:
        return int(self.data.get("chunks", 0)) + self.vectors

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)

    def merge(self, other: FakeReport) -> None:
        self.vectors += other.vectors


@dataclass(frozen=True)
class FakeScope:
    sessions_dir: Path | None = None
    agent_roots: tuple[tuple[str, Path], ...] = ()


@dataclass(frozen=True)
class FakeHit:
    path: str

    def to_hit(self) -> Hit:
        return Hit(self.path, 0, 0, 0.0, "", "memory")


@dataclass
class FakeSearched:
    hits: list[FakeHit]

    def reply(self, took_ms: float) -> SearchReply:
        return SearchReply(tuple(h.to_hit() for h in self.hits), provider="none",
                           model="fts-only", mode="fts-only", took_ms=took_ms)


class FakeIndex:
    """Records what the writer asks of it, in order; `gate` holds every write."""

    def __init__(self, workspace: Path = Path("/nonexistent/workspace")) -> None:
        self.settings = Settings()
        self.on_damage: Callable[[str], None] | None = None
        self.workspace = workspace
        self.scope = FakeScope()
        self.db_path = workspace / "index.sqlite"
        self.vectors_failed = False
        self.calls: list[tuple[str, Any]] = []
        self.fills = 0  # vector fills after a keyword write (not in `calls`)
        self.gate = threading.Event()
        self.gate.set()
        self.fail_paths = False
        self.fail_sync = False
        self.sync_rows = 0  # chunks and vectors a whole sync reports written
        self.lock = threading.Lock()
        self.concurrent = 0
        self.max_concurrent = 0
        self.notes: list[str] = []
        self.closed = False

    def _enter(self) -> None:
        with self.lock:
            self.concurrent += 1
            self.max_concurrent = max(self.max_concurrent, self.concurrent)

    def _leave(self) -> None:
        with self.lock:
            self.concurrent -= 1

    # -- reading --------------------------------------------------------------------------
    def search(self, query: str, max_results: int | None = None,
               min_score: float | None = None, sources: Sequence[str] | None = None,
               explain: bool = False, *, record: bool = True,
               today: datetime.date | None = None) -> list[FakeHit]:
        return [FakeHit(n) for n in self.notes if query in n][:max_results or 6]

    def searched(self, query: str, max_results: int | None = None,
                 min_score: float | None = None, sources: Sequence[str] | None = None,
                 explain: bool = False, *, record: bool = True,
                 today: datetime.date | None = None,
                 project: str | None = None) -> FakeSearched:
        return FakeSearched(self.search(query, max_results))

    def get(self, path: str, from_line: int | None = None, lines: int | None = None, *,
            namespace: str | None = None) -> Mapping[str, Any]:
        if path not in self.notes:
            raise NotFoundError(f"{path}: no such file")
        return {"path": path, "text": ""}

    def status(self) -> IndexStatus:
        return IndexStatus.from_json({"workspace": str(self.workspace),
                                      "files": {"indexed": len(self.notes)}})

    def is_indexed_path(self, rel_path: str) -> bool:
        return rel_path.endswith(".md")

    def file_replaced(self) -> bool:
        return False

    def add(self, text: str, target: str = "daily", *, sync: bool = True) -> dict[str, Any]:
        path = "MEMORY.md" if target == "long-term" else "memory/today.md"
        self.notes.append(path)
        return {"path": path, "startLine": 3, "endLine": 3, "citation": f"{path}#L3"}

    # -- writing --------------------------------------------------------------------------
    def sync(self, force: bool = False, progress: Progress | None = None, *,
             fill_vectors: bool = True) -> FakeReport:
        self._enter()
        try:
            self.gate.wait(10)
            for i in range(3):
                if progress is not None:
                    progress("files", i + 1, 3)
            self.calls.append(("sync", force))
            if self.fail_sync:
                raise RuntimeError("server gone")
            return FakeReport({"scanned": 3, "skipped": []}, vectors=self.sync_rows)
        finally:
            self._leave()

    def sync_paths(self, rel_paths: Iterable[str], *,
                   fill_vectors: bool = True) -> FakeReport:
        self._enter()
        try:
            self.gate.wait(10)
            paths = list(rel_paths)
            self.calls.append(("paths", paths))
            if self.fail_paths:
                raise RuntimeError("disk on fire")
            return FakeReport({"indexed": len(paths)})
        finally:
            self._leave()

    def fill_vectors(self, should_stop: Callable[[], bool] | None = None,
                     progress: Progress | None = None, *,
                     between: Callable[[], Sequence[str]] | None = None,
                     first: Sequence[str] = ()) -> FakeReport:
        self.fills += 1
        return FakeReport(vectors=0)

    def warm(self) -> None:
        self.calls.append(("warm", None))

    def warm_store(self) -> None:
        self.calls.append(("warm_store", None))

    def prune_cache(self) -> int:
        self.calls.append(("prune", None))
        return 0

    def checkpoint(self) -> None:
        self.calls.append(("checkpoint", None))

    def dream(self, phase: str = "all", dry_run: bool = False) -> dict[str, Any]:
        self.calls.append(("dream", phase))
        return {"phase": phase, "dryRun": dry_run}

    def close(self) -> None:
        self.closed = True


_: ServedIndex = FakeIndex()  # mypy: the fake is a complete ServedIndex


@pytest.fixture
def setup() -> Iterator[tuple[FakeIndex, Indexer]]:
    index = FakeIndex()
    ix = Indexer(index, batch_size=3, max_paths=10)
    ix.start()
    yield index, ix
    index.gate.set()
    ix.stop(timeout=5)


def test_paths_are_batched_while_busy(setup: tuple[FakeIndex, Indexer]) -> None:
    index, ix = setup
    index.gate.clear()
    ix.submit([Change("a.md", False)])
    assert wait_for(lambda: index.concurrent == 1)  # the writer is busy with "a.md"
    ix.submit([Change(p, False) for p in ("b.md", "c.md", "d.md", "e.md")])
    ix.submit([Change("b.md", True)])  # already queued: coalesced
    assert ix.depth() == 4
    index.gate.set()
    assert wait_for(lambda: ix.depth() == 0 and ix.state == "idle")
    assert index.calls == [("paths", ["a.md"]), ("paths", ["b.md", "c.md", "d.md"]),
                                        ("paths", ["e.md"])]
    assert index.max_concurrent == 1  # one writer, always
    assert index.fills == 3  # each batch: keyword rows first, then its vectors
    assert ix.last_batch is not None and ix.last_error is None


def test_overflow_drops_paths_and_reconciles(setup: tuple[FakeIndex, Indexer]) -> None:
    index, ix = setup
    index.gate.clear()
    ix.submit([Change("first.md", False)])
    assert wait_for(lambda: index.concurrent == 1)
    ix.submit([Change(f"{i}.md", False) for i in range(11)])  # > max_paths
    assert ix.overflows == 1
    index.gate.set()
    assert wait_for(lambda: ("sync", False) in index.calls and ix.state == "idle")
    assert not any(kind == "paths" and "3.md" in arg for kind, arg in index.calls)
    assert ix.last_reconcile is not None
    assert "indexer queue overflow" in ix.last_reconcile.reasons


def test_sync_future_and_coalescing(setup: tuple[FakeIndex, Indexer]) -> None:
    index, ix = setup
    index.gate.clear()
    ix.submit([Change("busy.md", False)])
    assert wait_for(lambda: index.concurrent == 1)
    futures = [ix.sync(), ix.sync(force=True)]
    ix.request_reconcile("periodic")
    ix.submit([Change("covered.md", False)])  # queued before the scan starts: covered by it
    index.gate.set()
    for fut in futures:
        assert fut.result(5) == {"scanned": 3, "skipped": []}
    # (the upkeep after the daemon's first reconcile, see the next test)
    assert wait_for(lambda: index.calls == [("paths", ["busy.md"]), ("sync", True),
                                            ("checkpoint", None)]), index.calls
    assert wait_for(lambda: ix.state == "idle")


def test_the_first_and_any_large_reconcile_run_the_store_upkeep_at_once(
        setup: tuple[FakeIndex, Indexer]) -> None:
    # A first index of thousands of chunks needs fresh statistics (and on PostgreSQL its
    # vector index) now, not at the next hourly upkeep, and so does a store filled while no
    # daemon ran, which the daemon's first reconcile finds with nothing to write; a small
    # reconcile after that leaves it to the hourly one.
    index, ix = setup
    ix.sync().result(5)
    assert wait_for(lambda: index.calls == [("sync", False), ("checkpoint", None)])
    ix.sync().result(5)
    assert wait_for(lambda: ix.state == "idle")
    assert index.calls == [("sync", False), ("checkpoint", None), ("sync", False)]
    index.sync_rows = 1000
    ix.sync().result(5)
    assert wait_for(lambda: index.calls[-1] == ("checkpoint", None))
    assert index.calls == [("sync", False), ("checkpoint", None), ("sync", False),
                           ("sync", False), ("checkpoint", None)]


def test_failed_batch_is_retried_by_one_reconcile(setup: tuple[FakeIndex, Indexer]) -> None:
    index, ix = setup
    index.fail_paths = True
    ix.submit([Change("x.md", False)])
    assert wait_for(lambda: ("sync", False) in index.calls and ix.state == "idle")
    assert ix.last_reconcile is not None
    assert ix.last_reconcile.reasons == ("retry after failed batch",)


def test_a_batch_that_succeeds_does_not_cancel_the_retry_of_an_earlier_failure(
        setup: tuple[FakeIndex, Indexer]) -> None:
    # A store that went away fails the batch for a.md and the reconcile after it; when it
    # comes back, the watcher's next change (b.md) is written first. That covers b.md only:
    # the retry that catches a.md up must still run (it once was dropped, and a.md stayed
    # unindexed until the periodic reconcile, 5 min later by default, never with it off).
    index, ix = setup
    index.fail_paths = index.fail_sync = True
    ix.submit([Change("a.md", False)])
    assert wait_for(lambda: ix.status().retry is not None)
    assert index.calls == [("paths", ["a.md"]), ("sync", False)]
    index.fail_paths = index.fail_sync = False
    ix.submit([Change("b.md", False)])
    assert wait_for(lambda: index.calls[2:4] == [("paths", ["b.md"]), ("sync", False)]
                    and ix.state == "idle"), index.calls
    assert ix.last_reconcile is not None and ix.status().retry is None
    assert ix.last_reconcile.reasons[0].startswith("retry: reconcile failed: server gone")


def test_an_outage_is_logged_in_full_once_per_kind_of_failure(
        setup: tuple[FakeIndex, Indexer]) -> None:
    # While the store is down every change fails its batch and then the reconcile after it:
    # two messages taking turns, each logged with its traceback once, repeats at debug level.
    index, ix = setup
    with logged() as out:
        index.fail_paths = index.fail_sync = True
        for i in range(3):
            ix.submit([Change("a.md", False)])
            after = 2 * i + 1  # the batch that just failed; its reconcile comes next

            def reconciled(after: int = after) -> bool:
                return ("sync", False) in index.calls[after:]

            assert wait_for(reconciled), index.calls
    lines = out.getvalue().splitlines()
    assert sum('"indexer_batch_failed"' in line for line in lines) == 1, lines
    assert sum('"indexer_reconcile_failed"' in line for line in lines) == 1, lines


def test_jobs_run_on_the_writer_thread(setup: tuple[FakeIndex, Indexer]) -> None:
    index, ix = setup
    names: list[str] = []

    def job(i: ServedIndex) -> str:
        names.append(threading.current_thread().name)
        i.checkpoint()
        return "done"

    fut = ix.run_job("checkpoint", job)
    assert fut.result(5) == "done"
    assert names == ["openmemd-indexer-main"]
    assert index.calls == [("checkpoint", None)]
    boom = ix.run_job("bad", lambda i: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        boom.result(5)
    assert ix.is_alive()


def runtime(index: FakeIndex, ix: Indexer) -> AgentRuntime:
    agent = AgentRuntime("main", Settings(), opener=lambda s, a: index)
    agent.index, agent.indexer = index, ix
    return agent


def test_an_add_never_waits_for_a_busy_writer(setup: tuple[FakeIndex, Indexer]) -> None:
    index, ix = setup
    index.gate.clear()  # the writer is held in a reconcile (a first index: minutes)
    ix.request_reconcile("start-up")
    assert wait_for(lambda: index.concurrent == 1)
    note = runtime(index, ix).add("a note", "daily")
    assert note.indexed is False and note.index_error is not None
    assert note.index_error.startswith("queued for indexing: the indexer is busy (reconciling")
    index.gate.set()  # then the writer takes the note's file like a watcher change
    assert wait_for(lambda: ("paths", ["memory/today.md"]) in index.calls)


def test_an_idle_writer_indexes_the_note_before_the_reply(
        setup: tuple[FakeIndex, Indexer]) -> None:
    index, ix = setup
    note = runtime(index, ix).add("a note", "daily")
    assert note.indexed is True and note.index_error is None
    assert index.calls[0] == ("paths", ["memory/today.md"])  # its keyword rows, before the reply
    assert wait_for(lambda: index.fills == 1)  # and its vector next


def test_stop_abandons_a_long_reconcile_and_fails_waiters() -> None:
    index = FakeIndex()
    index.gate.clear()
    ix = Indexer(index)
    ix.start()
    running = ix.sync()
    assert wait_for(lambda: index.concurrent == 1)
    queued = ix.run_job("later", lambda i: None)
    threading.Timer(0.2, index.gate.set).start()
    assert ix.stop(timeout=5)
    with pytest.raises(UnavailableError):
        queued.result(1)
    with pytest.raises(UnavailableError):  # progress callback abandoned the scan
        running.result(1)
    assert ix.state == "stopped"
    with pytest.raises(UnavailableError):
        ix.sync().result(1)
