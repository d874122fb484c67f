"""The fill embeds the useful part first and never makes an edit wait (issue 28, items 1-2),
and derived files are not embedded unless searched (issue 27, item 3).

The real default model on real SQLite, the daemon's real writer thread; what is asserted is
the order of events (what still waits for a vector when something else is found), never time.
"""

from __future__ import annotations

import dataclasses
import threading
from itertools import pairwise
from pathlib import Path

import pytest

from helpers import wait_for
from openmemd.api import MemoryIndex
from openmemd.config import Settings
from openmemd.server.indexer import Indexer
from openmemd.server.watcher import Change

WORDS = ["budget", "meeting", "design", "database", "migration", "garden", "travel", "recipe",
         "invoice", "hiring"]


def long_note(i: int, lines: int = 60) -> str:
    """About three 400-token chunks: slow enough to embed that a fill is seen working."""
    return "\n".join(f"Line {n} of note {i}: " + " ".join(WORDS[(n + k + i) % len(WORDS)]
                                                       for k in range(12))
                     for n in range(lines)) + "\n"


def pending_paths(index: MemoryIndex, *, derived: bool = True) -> set[str]:
    """Files with chunks still waiting for a vector, read from SQLite itself."""
    rows = index.store.writer().conn.execute(
        "SELECT DISTINCT path FROM chunks WHERE embedding = '[]'").fetchall()
    return {p for (p,) in rows if derived or not p.startswith("memory/dreaming/")}


@pytest.fixture
def local(make_settings) -> Settings:
    return make_settings(provider="local")


@pytest.mark.slow  # the real model embeds every chunk of several long notes
def test_memory_md_and_the_newest_notes_get_their_vectors_first(local, workspace: Path):
    mem = workspace / "memory"
    (workspace / "MEMORY.md").write_text("# Memory\n\n" + long_note(0, 20))
    for day in ("2026-01-03", "2026-03-09", "2026-02-14"):
        (mem / f"{day}.md").write_text(long_note(int(day[-2:])))
    (mem / "projects.md").write_text(long_note(7))
    with MemoryIndex.open(workspace, config=local) as index:
        index.sync(fill_vectors=False)
        assert pending_paths(index) == {"MEMORY.md", "memory/2026-01-03.md",
                                        "memory/2026-03-09.md", "memory/2026-02-14.md",
                                        "memory/projects.md"}
        finished: list[set[str]] = []  # what still waited after each file was done

        def progress(phase: str, done: int, total: int) -> None:
            left = pending_paths(index)
            if not finished or finished[-1] != left:
                finished.append(left)

        index.fill_vectors(progress=progress)
        order = [next(iter(a - b)) for a, b in pairwise(finished)
                 if len(a - b) == 1]
        assert order == ["MEMORY.md", "memory/2026-03-09.md", "memory/2026-02-14.md",
                         "memory/2026-01-03.md", "memory/projects.md"], finished
        assert pending_paths(index) == set()


def test_dreaming_reports_are_not_embedded_until_search_includes_them(local, workspace: Path):
    (workspace / "memory" / "2026-01-05.md").write_text("The walrus moved to the north dock.\n")
    report = workspace / "memory" / "dreaming" / "deep" / "2026-01-05.md"
    report.parent.mkdir(parents=True)
    report.write_text("# Deep sleep\n\n- walrus moved to the north dock (confidence 0.9)\n")
    with MemoryIndex.open(workspace, config=local) as index:
        index.sync()
        # keyword rows only: nothing waits for a vector, and the report has none
        assert index.status().pending_vectors == 0
        assert pending_paths(index, derived=False) == set()
        assert pending_paths(index) == {"memory/dreaming/deep/2026-01-05.md"}
        # asked for: turning the setting on fills their vectors ...
        index.settings = dataclasses.replace(index.settings, query=dataclasses.replace(
            index.settings.query, dreaming_reports=True))
        assert index.status().pending_vectors == 1
        assert index.fill_vectors().vectors_embedded == 1
        assert pending_paths(index) == set()
        # ... and off again, a new report costs nothing
        index.settings = dataclasses.replace(index.settings, query=dataclasses.replace(
            index.settings.query, dreaming_reports=False))
        report.with_name("2026-01-06.md").write_text("# Deep sleep\n\n- another report\n")
        assert index.sync().vectors_embedded == 0
        assert pending_paths(index) == {"memory/dreaming/deep/2026-01-06.md"}


@pytest.mark.slow  # the real model embeds every chunk of several long notes
def test_an_edit_is_searchable_and_embedded_ahead_of_a_running_fill(local, workspace: Path):
    mem = workspace / "memory"
    for i in range(10):
        (mem / f"2025-06-{i + 10:02d}.md").write_text(long_note(i))
    with MemoryIndex.open(workspace, config=local) as index:
        index.sync(fill_vectors=False)
        total = index.status().pending_vectors
        writer = Indexer(index, name="main")
        embedded_while_edit_waited: list[int] = []
        writer.start()
        try:
            writer.request_reconcile("first index")
            assert wait_for(lambda: (writer.progress is not None
                                     and writer.progress.phase == "vectors"
                                     and writer.progress.done > 0), 300)
            # Saved while the fill embeds: an old note's edit and a new note.
            (mem / "2025-06-10.md").unlink()
            (mem / "2020-01-01.md").write_text("The zebracorn codeword is quartz.\n")
            writer.submit([Change("memory/2025-06-10.md", True),
                           Change("memory/2020-01-01.md", False)])
            assert wait_for(lambda: any(h.path == "memory/2020-01-01.md"
                                        for h in index.search("zebracorn")), 120)
            left = index.status().pending_vectors
            assert left > 0, "the fill was over before the edit was found"  # it did not wait
            assert not any(h.path == "memory/2025-06-10.md" for h in index.search("note 0"))
            # Its chunk is embedded before the older notes still waiting: the oldest date,
            # last in the fill's own order, yet first after the edit.
            assert wait_for(lambda: "memory/2020-01-01.md" not in pending_paths(index), 120)
            embedded_while_edit_waited.append(total - left)
            assert len(pending_paths(index)) > 0, "the fill ended before the edit's vector"
            assert wait_for(lambda: index.status().pending_vectors == 0, 600)
        finally:
            assert writer.stop(60)
        assert writer.last_error is None


@pytest.mark.slow  # the real model embeds every chunk of several long notes
def test_progress_never_reads_zero_at_a_zero_rate_once_a_batch_is_done(local, workspace):
    for i in range(4):
        (workspace / "memory" / f"2025-07-{i + 10:02d}.md").write_text(long_note(i, 30))
    with MemoryIndex.open(workspace, config=local) as index:
        index.sync(fill_vectors=False)
        writer = Indexer(index, name="main")
        seen: list[dict[str, object]] = []
        stop = threading.Event()

        def watch() -> None:
            while not stop.is_set():
                p = writer.status().progress
                if p is not None and p["phase"] == "vectors":
                    seen.append(p)

        watcher = threading.Thread(target=watch)
        watcher.start()
        writer.start()
        try:
            writer.request_reconcile("first index")
            assert wait_for(lambda: index.status().pending_vectors == 0, 300)
        finally:
            stop.set()
            watcher.join()
            writer.stop(60)
        assert seen
        # before its first batch the rate is unknown (None: "measuring"), never a made-up 0.0
        assert all(p["rate"] is None or p["rate"] > 0 for p in seen), seen
        assert all(p["rate"] for p in seen if p["done"]), seen
