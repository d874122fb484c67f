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
        report = SyncReport()
        v = self.vectors
        if v is None:
            return report
        total = self.pending()
        done = 0
        edited: list[str] = list(first)

        def advance(count: int) -> None:  # after every batch
            nonlocal done
            done += count
            if progress is not None and count:
                progress("vectors", done, max(total, done))

        def serve_edits() -> None:  # while a batch embeds: see the module docstring
            nonlocal total
            if between is not None:
                paths = between()
                if paths:
                    edited.extend(paths)
                    total = done + self.pending()

        if progress is not None and total:
            progress("vectors", 0, total)  # starts the clock of the rate
        page_size = max(PAGE_CHUNKS, v.batch_size)
        queue: list[PendingFile] = []
        stopped = False
        while not stopped:
            if edited or not queue:  # (re)plan: edited files first, then by rank
                queue = fill_order.plan(self.writer.pending_files(self.model,
                                                                  derived=self.derived), edited)
                edited = []
            page = self._page(queue, page_size)
            if not page:
                break
            by_hash: dict[str, list[str]] = {}
            texts: dict[str, str] = {}
            for cid, h, text in page:
                by_hash.setdefault(h, []).append(cid)
                texts[h] = text
            cached = self.cached(set(by_hash))
            if cached:
                in_transaction(self.writer,
                               partial(self._store_vectors, cached, by_hash, cache_it=False))
                report.vectors_from_cache += sum(len(by_hash[h]) for h in cached)
                advance(sum(len(by_hash[h]) for h in cached))
            misses = [h for h in by_hash if h not in cached]
            # Two batches in flight: the pool embeds one while this thread writes the other.
            in_flight: deque[tuple[list[str], Future[np.ndarray]]] = deque()
            for i in range(0, len(misses), v.batch_size):
                if should_stop is not None and should_stop():
                    stopped = True
                    break
                if edited:  # the edited files' chunks go next: the rest is planned again
                    break
                batch = misses[i:i + v.batch_size]
                in_flight.append((batch, v.pool.submit([texts[h] for h in batch])))
                if len(in_flight) >= 2:
                    batch, future = in_flight.popleft()
                    self._await(future, serve_edits)
                    written = self._write_batch(batch, future, by_hash)
                    report.vectors_embedded += written
                    advance(written)
            while in_flight:
                batch, future = in_flight.popleft()
                if (stopped or edited) and future.cancel():
                    continue  # not started yet: left pending for the next page or fill
                # started (or done): finish and keep it, nothing embedded is thrown away
                self._await(future, serve_edits)
                written = self._write_batch(batch, future, by_hash)
                report.vectors_embedded += written
                advance(written)
            stopped = stopped or (should_stop is not None and should_stop())
        report.vectors_pending = self.pending()
        return report

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
