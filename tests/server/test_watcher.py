"""The watcher on real directories with the real watchdog observer (inotify here).

A recording sink stands in for the indexer; a short debounce keeps the tests fast. Waits are
polling loops with generous timeouts; assertions never depend on a fixed sleep.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from helpers import wait_for
from openmemd.server.debounce import Debouncer
from openmemd.server.watcher import (
    STATE_POLLING,
    STATE_POLLING_CONFIGURED,
    STATE_RUNNING,
    Change,
    Watcher,
    is_editor_temp,
)

DEBOUNCE_MS = 150


def indexed(rel: str) -> bool:
    """The workspace layout's rule: MEMORY.md, memory/**/*.md, sessions/*.jsonl."""
    if rel in ("MEMORY.md", "memory.md"):
        return True
    if rel.startswith("memory/") and rel.endswith(".md"):
        return True
    return rel.startswith("sessions/") and rel.count("/") == 1 and rel.endswith(".jsonl")


class Sink:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.batches: list[list[Change]] = []
        self.reconciles: list[str] = []

    def submit(self, changes: Sequence[Change]) -> None:
        with self.lock:
            self.batches.append(list(changes))

    def request_reconcile(self, reason: str) -> None:
        with self.lock:
            self.reconciles.append(reason)

    def changes(self) -> list[Change]:
        with self.lock:
            return [c for b in self.batches for c in b]

    def last(self) -> dict[str, bool]:
        """path -> removed, the latest change per path."""
        out: dict[str, bool] = {}
        for c in self.changes():
            out[c.path] = c.removed
        return out

    def clear(self) -> None:
        with self.lock:
            self.batches.clear()
            self.reconciles.clear()




def settle(sink: Sink, quiet: float = DEBOUNCE_MS / 1000 * 3) -> None:
    """Wait until no new change arrived for `quiet` seconds (bounded)."""
    deadline = time.monotonic() + 10
    count, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        n = len(sink.changes()) + len(sink.reconciles)
        if n != count:
            count, since = n, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        time.sleep(0.02)


@pytest.fixture
def ws() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(dir="/tmp", prefix="omw"))
    (d / "memory").mkdir()
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def watch(ws: Path) -> Iterator[tuple[Watcher, Sink]]:
    sink = Sink()
    w = Watcher(ws, indexed, sink, debounce_ms=DEBOUNCE_MS, polling_interval=0.3)
    w.start()
    assert w.state == STATE_RUNNING
    yield w, sink
    w.stop()


def test_plain_write_is_one_upsert(watch: tuple[Watcher, Sink], ws: Path) -> None:
    _, sink = watch
    note = ws / "memory" / "2026-01-01.md"
    with open(note, "w") as fh:  # several writes and a close: one debounced change
        for i in range(20):
            fh.write(f"line {i}\n")
            fh.flush()
    assert wait_for(lambda: sink.last().get("memory/2026-01-01.md") is False)
    settle(sink)
    assert sink.changes() == [Change("memory/2026-01-01.md", False)]


def test_burst_restarts_the_timer(ws: Path) -> None:
    sink = Sink()
    w = Watcher(ws, indexed, sink, debounce_ms=400)
    w.start()
    try:
        note = ws / "MEMORY.md"
        started = time.monotonic()
        for i in range(6):  # 6 writes 100 ms apart: each restarts the 400 ms window
            note.write_text(f"v{i}\n")
            time.sleep(0.1)
        assert wait_for(lambda: bool(sink.changes()))
        assert time.monotonic() - started >= 0.5 + 0.4 - 0.05
        settle(sink, 0.6)
        assert sink.changes() == [Change("MEMORY.md", False)]
    finally:
        w.stop()


def test_atomic_rename_save(watch: tuple[Watcher, Sink], ws: Path) -> None:
    _, sink = watch
    target = ws / "memory" / "note.md"
    tmp = ws / "memory" / ".note.md.tmp"
    tmp.write_text("new content\n")
    os.replace(tmp, target)
    assert wait_for(lambda: sink.last().get("memory/note.md") is False)
    settle(sink)
    assert all(c.path == "memory/note.md" for c in sink.changes())


def test_vim_style_save_is_one_upsert(watch: tuple[Watcher, Sink], ws: Path) -> None:
    _, sink = watch
    note = ws / "memory" / "vim.md"
    note.write_text("v1\n")
    assert wait_for(lambda: "memory/vim.md" in sink.last())
    settle(sink)
    sink.clear()
    # vim (backupcopy=no): rename the original to a backup, write anew, delete the backup;
    # plus its 4913 probe file and a swap file.
    (ws / "memory" / "4913").write_text("")
    (ws / "memory" / "4913").unlink()
    (ws / "memory" / ".vim.md.swp").write_text("swap")
    os.rename(note, ws / "memory" / "vim.md~")
    note.write_text("v2\n")
    (ws / "memory" / "vim.md~").unlink()
    (ws / "memory" / ".vim.md.swp").unlink()
    assert wait_for(lambda: bool(sink.changes()))
    settle(sink)
    assert sink.changes() == [Change("memory/vim.md", False)]


def test_delete_is_a_removal(watch: tuple[Watcher, Sink], ws: Path) -> None:
    _, sink = watch
    note = ws / "memory" / "gone.md"
    note.write_text("x\n")
    assert wait_for(lambda: "memory/gone.md" in sink.last())
    settle(sink)
    sink.clear()
    note.unlink()
    assert wait_for(lambda: sink.last().get("memory/gone.md") is True)


def test_delete_then_create_within_window_is_an_upsert(watch: tuple[Watcher, Sink],
                                                       ws: Path) -> None:
    _, sink = watch
    note = ws / "memory" / "flip.md"
    note.write_text("a\n")
    assert wait_for(lambda: "memory/flip.md" in sink.last())
    settle(sink)
    sink.clear()
    note.unlink()
    note.write_text("b\n")
    assert wait_for(lambda: bool(sink.changes()))
    settle(sink)
    assert sink.changes() == [Change("memory/flip.md", False)]


def test_new_subdirectory_after_start(watch: tuple[Watcher, Sink], ws: Path) -> None:
    _, sink = watch
    deep = ws / "memory" / "projects" / "2026"
    deep.mkdir(parents=True)
    (deep / "plan.md").write_text("plan\n")
    assert wait_for(lambda: sink.last().get("memory/projects/2026/plan.md") is False)
    # and later writes in that new directory are seen too (a watch was added)
    sink.clear()
    (deep / "later.md").write_text("later\n")
    assert wait_for(lambda: sink.last().get("memory/projects/2026/later.md") is False)


def test_tree_moved_in(watch: tuple[Watcher, Sink], ws: Path) -> None:
    _, sink = watch
    outside = Path(tempfile.mkdtemp(dir="/tmp", prefix="omo"))
    try:
        tree = outside / "imported"
        (tree / "sub").mkdir(parents=True)
        (tree / "a.md").write_text("a\n")
        (tree / "sub" / "b.md").write_text("b\n")
        (tree / "ignored.txt").write_text("no\n")
        os.rename(tree, ws / "memory" / "imported")
        assert wait_for(lambda: {"memory/imported/a.md", "memory/imported/sub/b.md"}
                        <= set(sink.last()))
        settle(sink)
        assert sink.last() == {"memory/imported/a.md": False, "memory/imported/sub/b.md": False}
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def test_tree_moved_out_asks_for_reconcile(watch: tuple[Watcher, Sink], ws: Path) -> None:
    _, sink = watch
    d = ws / "memory" / "old"
    d.mkdir()
    (d / "x.md").write_text("x\n")
    assert wait_for(lambda: "memory/old/x.md" in sink.last())
    settle(sink)
    sink.clear()
    outside = Path(tempfile.mkdtemp(dir="/tmp", prefix="omo"))
    try:
        os.rename(d, outside / "old")
        assert wait_for(lambda: bool(sink.reconciles))
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def test_directory_renamed_inside(watch: tuple[Watcher, Sink], ws: Path) -> None:
    _, sink = watch
    d = ws / "memory" / "a"
    d.mkdir()
    (d / "n.md").write_text("n\n")
    assert wait_for(lambda: "memory/a/n.md" in sink.last())
    settle(sink)
    sink.clear()
    os.rename(d, ws / "memory" / "b")
    assert wait_for(lambda: sink.last().get("memory/b/n.md") is False
                    and sink.last().get("memory/a/n.md") is True)


def test_file_moved_out_and_in(watch: tuple[Watcher, Sink], ws: Path) -> None:
    _, sink = watch
    outside = Path(tempfile.mkdtemp(dir="/tmp", prefix="omo"))
    try:
        (outside / "in.md").write_text("in\n")
        os.rename(outside / "in.md", ws / "memory" / "in.md")
        assert wait_for(lambda: sink.last().get("memory/in.md") is False)
        settle(sink)
        sink.clear()
        os.rename(ws / "memory" / "in.md", outside / "in.md")
        assert wait_for(lambda: sink.last().get("memory/in.md") is True)
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def test_unindexed_files_are_ignored(watch: tuple[Watcher, Sink], ws: Path) -> None:
    _, sink = watch
    (ws / "notes.txt").write_text("x")
    (ws / "memory" / "data.json").write_text("{}")
    (ws / "memory" / "#draft.md#").write_text("x")
    (ws / "memory" / "real.md").write_text("x")
    assert wait_for(lambda: "memory/real.md" in sink.last())
    settle(sink)
    assert set(sink.last()) == {"memory/real.md"}


def test_polling_fallback_sees_changes(ws: Path) -> None:
    sink = Sink()
    w = Watcher(ws, indexed, sink, debounce_ms=50, force_polling=True, polling_interval=0.2)
    w.start()
    try:
        assert w.state == STATE_POLLING_CONFIGURED  # asked for: not "degraded"
        assert w.status().backend == "polling"
        (ws / "memory" / "p.md").write_text("p\n")
        assert wait_for(lambda: sink.last().get("memory/p.md") is False)
    finally:
        w.stop()


def test_dead_observer_is_restarted_as_polling(watch: tuple[Watcher, Sink], ws: Path) -> None:
    w, sink = watch
    assert not w.check()  # healthy: nothing to do
    w._observer.stop()  # simulate the native observer dying
    w._observer.join(5)
    assert w.check()
    assert w.state == STATE_POLLING
    assert "watcher restarted" in sink.reconciles
    (ws / "memory" / "after.md").write_text("x\n")
    assert wait_for(lambda: sink.last().get("memory/after.md") is False)


def test_native_failure_falls_back_to_polling(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import openmemd.server.watch_limits as watch_limits_mod

    class Broken:
        def __init__(self, *a: object, **k: object) -> None:
            raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(watch_limits_mod, "Observer", Broken)
    sink = Sink()
    w = Watcher(ws, indexed, sink, debounce_ms=50)
    w.start()
    try:
        assert w.state == STATE_POLLING
        assert "inotify watch limit" in (w.status().error or "")
    finally:
        w.stop()


def test_missing_workspace_is_failed_not_raised(tmp_path: Path) -> None:
    w = Watcher(tmp_path / "nope", indexed, Sink(), debounce_ms=50)
    w.start()
    assert w.state == "failed"
    w.stop()


def test_editor_temp_names() -> None:
    for name in ("a.md.swp", ".a.md.swx", "a.md~", ".#a.md", "4913", ".a.md.tmp", "#a.md#"):
        assert is_editor_temp(name), name
    for name in ("a.md", "2026-01-01.md", "MEMORY.md", "s.jsonl"):
        assert not is_editor_temp(name), name


def test_debouncer_overflow_asks_for_reconcile() -> None:
    flushed: list[list[tuple[str, object]]] = []
    overflowed = threading.Event()
    d = Debouncer(10.0, flushed.append, max_pending=3, on_overflow=overflowed.set)
    d.start()
    try:
        for i in range(4):
            d.touch(f"p{i}", False)
        assert overflowed.is_set()
        assert d.pending() == 0
    finally:
        d.stop()


def test_debouncer_survives_a_failing_sink() -> None:
    calls: list[int] = []

    def flush(items: list[tuple[str, object]]) -> None:
        calls.append(len(items))
        if len(calls) == 1:
            raise RuntimeError("boom")

    d = Debouncer(0.01, flush)
    d.start()
    try:
        d.touch("a", False)
        assert wait_for(lambda: len(calls) == 1)
        d.touch("b", False)
        assert wait_for(lambda: len(calls) == 2)
    finally:
        d.stop()
