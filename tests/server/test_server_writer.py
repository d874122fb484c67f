"""The single-writer indexer thread, against a recording index (our own stand-in)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from helpers import wait_for
from openmemd.errors import UnavailableError
from openmemd.server.watcher import Change
from openmemd.server.writer import IndexWriter


class FakeIndex:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.fail_paths = False
        self.lock = threading.Lock()
        self.concurrent = 0
        self.max_concurrent = 0

    def _enter(self) -> None:
        with self.lock:
            self.concurrent += 1
            self.max_concurrent = max(self.max_concurrent, self.concurrent)

    def _leave(self) -> None:
        with self.lock:
            self.concurrent -= 1

    def sync(self, force: bool = False, progress: Any = None) -> dict:
        self._enter()
        try:
            self.gate.wait(10)
            for i in range(3):
                if progress is not None:
                    progress("files", i + 1, 3)
            self.calls.append(("sync", force))
            return {"scanned": 3, "skipped": []}
        finally:
            self._leave()

    def sync_paths(self, paths: Any) -> dict:
        self._enter()
        try:
            self.gate.wait(10)
            paths = list(paths)
            self.calls.append(("paths", paths))
            if self.fail_paths:
                raise RuntimeError("disk on fire")
            return {"indexed": len(paths)}
        finally:
            self._leave()

    def checkpoint(self) -> str:
        self.calls.append(("checkpoint", None))
        return "done"




@pytest.fixture
def setup() -> Any:
    index = FakeIndex()
    ix = IndexWriter(index, batch_size=3, max_paths=10)
    ix.start()
    yield index, ix
    index.gate.set()
    ix.stop(timeout=5)


def test_paths_are_batched_while_busy(setup: Any) -> None:
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
    assert ix.last_batch is not None and ix.last_error is None


def test_overflow_drops_paths_and_reconciles(setup: Any) -> None:
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
    assert "indexer queue overflow" in ix.last_reconcile["reasons"]


def test_sync_future_and_coalescing(setup: Any) -> None:
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
    assert wait_for(lambda: ix.state == "idle")
    assert index.calls == [("paths", ["busy.md"]), ("sync", True)]


def test_failed_batch_is_retried_by_one_reconcile(setup: Any) -> None:
    index, ix = setup
    index.fail_paths = True
    ix.submit([Change("x.md", False)])
    assert wait_for(lambda: ("sync", False) in index.calls and ix.state == "idle")
    assert ix.last_reconcile is not None
    assert ix.last_reconcile["reasons"] == ["retry after failed batch"]


def test_jobs_run_on_the_writer_thread(setup: Any) -> None:
    _, ix = setup
    names: list[str] = []
    fut = ix.run_job("checkpoint", lambda i: (names.append(threading.current_thread().name),
                                              i.checkpoint())[1])
    assert fut.result(5) == "done"
    assert names == ["openmemd-indexer-main"]
    boom = ix.run_job("bad", lambda i: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        boom.result(5)
    assert ix.is_alive()


def test_stop_abandons_a_long_reconcile_and_fails_waiters() -> None:
    index = FakeIndex()
    index.gate.clear()
    ix = IndexWriter(index)
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
