"""Phase 2 of a sync: embed the chunks still waiting for a vector and write them.

Batches go through the worker pool and are written as they complete, so interrupting the fill
loses nothing already embedded. `IndexSync` holds one over its own store writer: phase 1 reads
the embedding cache through it too (`cached`).

The fill never makes an edit wait (the daemon's writer thread runs it): it works in pages of
a few batches, in the order of index/fill_order.py, and while a batch embeds in the pool it
calls `between` every EDIT_POLL_S -- the writer commits the keyword rows and deletions of
files saved meanwhile there, on this same thread (one writer), and returns their paths, whose
chunks the next page embeds first. A vector whose chunk an edit replaced or deleted meanwhile
is dropped by the store (`set_vectors` ignores ids that are gone).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from openmemd.index import fill_order
from openmemd.index.report import FTS_ONLY_MODEL, Progress, SyncReport, VectorTarget
from openmemd.store.base import PendingChunk, PendingFile, StoreWriter

# How often a fill waiting for a batch looks for edits to commit (`between`).
EDIT_POLL_S = 0.05
# Chunks a page holds at least: small, so an edited file's chunks wait for at most one page.
PAGE_CHUNKS = 16
# Files with what waits for a vector are planned in this order (fill_order.plan): the plan is
# made again after an edit or when it runs out, not for every page.
Between = Callable[[], Sequence[str]]


def in_transaction(writer: StoreWriter, fn: Callable[[], None]) -> None:
    """Run `fn` in one store transaction: a file's rows, a batch of vectors, all or nothing."""
    with writer.transaction():
        fn()


@dataclass
class _FillRun:
    """One `VectorFill.fill`: its report and progress count, the files edited meanwhile (their
    chunks go next) and whether it was told to stop."""

    pending: Callable[[], int]  # the chunks still waiting for a vector
    progress: Progress | None
    should_stop: Callable[[], bool] | None
    between: Between | None
    total: int
    edited: list[str]
    done: int = 0
    stopped: bool = False
    report: SyncReport = field(default_factory=SyncReport)

    def advance(self, count: int) -> None:  # after every batch
        self.done += count
        if self.progress is not None and count:
            self.progress("vectors", self.done, max(self.total, self.done))

    def serve_edits(self) -> None:  # while a batch embeds: see the module docstring
        if self.between is not None:
            paths = self.between()
            if paths:
                self.edited.extend(paths)
                self.total = self.done + self.pending()

    def told_to_stop(self) -> bool:
        return self.should_stop is not None and self.should_stop()


class VectorFill:
    """`derived`: whether derived files (store/derived.py), which search leaves out unless
    `query.dreaming_reports` is on, are embedded; when not, they keep keyword rows only."""

    def __init__(self, writer: StoreWriter, vectors: VectorTarget | None, *,
                 derived: bool = True) -> None:
        self.writer = writer
        self.vectors = vectors
        self.model = vectors.model if vectors else FTS_ONLY_MODEL
        self.derived = derived

    def cached(self, hashes: set[str]) -> dict[str, np.ndarray]:
        """The embedding cache's vectors for these chunk hashes (none without a cache)."""
        v = self.vectors
        if v is None or not v.cache_enabled or not hashes:
            return {}
        return self.writer.cache_lookup(v.cache_key, sorted(hashes))

    def pending(self) -> int:
        if self.vectors is None:
            return 0
        return self.writer.count_pending_vectors(self.model, derived=self.derived)

    def fill(self, *, progress: Progress | None = None,
             should_stop: Callable[[], bool] | None = None,
             between: Between | None = None, first: Sequence[str] = ()) -> SyncReport:
        """Embed every chunk that has no vector yet (`first` files' before the others);
        return what was done and what is left."""
        v = self.vectors
        if v is None:
            return SyncReport()
        run = _FillRun(self.pending, progress, should_stop, between, total=self.pending(),
                       edited=list(first))
        if progress is not None and run.total:
            progress("vectors", 0, run.total)  # starts the clock of the rate
        page_size = max(PAGE_CHUNKS, v.batch_size)
        queue: list[PendingFile] = []
        while not run.stopped:
            if run.edited or not queue:  # (re)plan: edited files first, then by rank
                queue = fill_order.plan(self.writer.pending_files(self.model,
                                                                  derived=self.derived),
                                        run.edited)
                run.edited = []
            page = self._page(queue, page_size)
            if not page:
                break
            self._fill_page(page, run)
            run.stopped = run.stopped or run.told_to_stop()
        run.report.vectors_pending = self.pending()
        return run.report

    def _fill_page(self, page: list[PendingChunk], run: _FillRun) -> None:
        """Vectors for one page: from the embedding cache, the rest embedded."""
        by_hash: dict[str, list[str]] = {}
        texts: dict[str, str] = {}
        for cid, h, text in page:
            by_hash.setdefault(h, []).append(cid)
            texts[h] = text
        cached = self.cached(set(by_hash))
        if cached:
            in_transaction(self.writer,
                           partial(self._store_vectors, cached, by_hash, cache_it=False))
            run.report.vectors_from_cache += sum(len(by_hash[h]) for h in cached)
            run.advance(sum(len(by_hash[h]) for h in cached))
        misses = [h for h in by_hash if h not in cached]
        self._embed(misses, texts, by_hash, run)

    def _embed(self, misses: list[str], texts: dict[str, str], by_hash: dict[str, list[str]],
               run: _FillRun) -> None:
        """Embed `misses` (chunk hashes) in batches and write them, until done, told to stop,
        or an edit comes in (its files' chunks go next: the rest is planned again)."""
        v = self.vectors
        assert v is not None
        # Two batches in flight: the pool embeds one while this thread writes the other.
        in_flight: deque[tuple[list[str], Future[np.ndarray]]] = deque()
        for i in range(0, len(misses), v.batch_size):
            if run.told_to_stop():
                run.stopped = True
                break
            if run.edited:
                break
            batch = misses[i:i + v.batch_size]
            in_flight.append((batch, v.pool.submit([texts[h] for h in batch])))
            if len(in_flight) >= 2:
                batch, future = in_flight.popleft()
                self._finish(batch, future, by_hash, run)
        while in_flight:
            batch, future = in_flight.popleft()
            if (run.stopped or run.edited) and future.cancel():
                continue  # not started yet: left pending for the next page or fill
            # started (or done): finish and keep it, nothing embedded is thrown away
            self._finish(batch, future, by_hash, run)

    def _finish(self, batch: list[str], future: Future[np.ndarray],
                by_hash: dict[str, list[str]], run: _FillRun) -> None:
        """Wait for a batch (committing edits meanwhile), write it and count it."""
        self._await(future, run.serve_edits)
        written = self._write_batch(batch, future, by_hash)
        run.report.vectors_embedded += written
        run.advance(written)

    def _page(self, queue: list[PendingFile], size: int) -> list[PendingChunk]:
        """The next `size` pending chunks of the planned files, taken off the head of
        `queue` (a file with more than that stays at its head, with what is left)."""
        paths: list[str] = []
        count = 0
        while queue and count < size:
            f = queue.pop(0)
            paths.append(f.path)
            count += f.chunks
            if count > size:
                queue.insert(0, f._replace(chunks=count - size))
        if not paths:
            return []
        return self.writer.pending_vectors(self.model, size, paths)

    @staticmethod
    def _await(future: Future[np.ndarray], serve_edits: Callable[[], None]) -> None:
        """Wait for a batch, committing edits meanwhile."""
        while not future.done():
            wait([future], timeout=EDIT_POLL_S)
            serve_edits()

    def _write_batch(self, batch: list[str], future: Future[np.ndarray],
                     by_hash: dict[str, list[str]]) -> int:
        matrix = future.result()
        vectors = {h: matrix[j] for j, h in enumerate(batch)}
        in_transaction(self.writer, partial(self._store_vectors, vectors, by_hash, cache_it=True))
        return sum(len(by_hash[h]) for h in batch)

    def _store_vectors(self, vectors: dict[str, np.ndarray], by_hash: dict[str, list[str]],
                       *, cache_it: bool) -> None:
        v = self.vectors
        assert v is not None
        now_ms = int(time.time() * 1000)
        self.writer.set_vectors([(cid, vector) for h, vector in vectors.items()
                                 for cid in by_hash[h]])
        if cache_it and v.cache_enabled:
            self.writer.cache_store(v.cache_key, list(vectors.items()), now_ms)
