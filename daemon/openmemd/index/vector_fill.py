"""Phase 2 of a sync: embed the chunks still waiting for a vector and write them.

Batches go through the worker pool and are written as they complete, so interrupting the fill
loses nothing already embedded. `IndexSync` holds one over its own store writer: phase 1 reads
the embedding cache through it too (`cached`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial

import numpy as np

from openmemd.index.report import FTS_ONLY_MODEL, Progress, SyncReport, VectorTarget
from openmemd.store.base import StoreWriter


def in_transaction(writer: StoreWriter, fn: Callable[[], None]) -> None:
    """Run `fn` in one store transaction: a file's rows, a batch of vectors, all or nothing."""
    with writer.transaction():
        fn()


class VectorFill:
    def __init__(self, writer: StoreWriter, vectors: VectorTarget | None) -> None:
        self.writer = writer
        self.vectors = vectors
        self.model = vectors.model if vectors else FTS_ONLY_MODEL

    def cached(self, hashes: set[str]) -> dict[str, np.ndarray]:
        """The embedding cache's vectors for these chunk hashes (none without a cache)."""
        v = self.vectors
        if v is None or not v.cache_enabled or not hashes:
            return {}
        return self.writer.cache_lookup(v.cache_key, sorted(hashes))

    def pending(self) -> int:
        if self.vectors is None:
            return 0
        return self.writer.count_pending_vectors(self.model)

    def fill(self, *, progress: Progress | None = None,
             should_stop: Callable[[], bool] | None = None,
             page_size: int = 256) -> SyncReport:
        """Embed every chunk that has no vector yet; return what was done and what is left."""
        report = SyncReport()
        v = self.vectors
        if v is None:
            return report
        total = self.writer.count_pending_vectors(self.model)
        done = 0
        stopped = False

        def advance(count: int) -> None:  # after every batch: a page can take minutes
            nonlocal done
            done += count
            if progress is not None:
                progress("vectors", done, max(total, done))

        if progress is not None and total:
            progress("vectors", 0, total)  # starts the clock of the rate
        while not stopped:
            # Every chunk of a page gets its vector before the next page is read, so the
            # next page is simply the next LIMIT of chunks still without one.
            page = self.writer.pending_vectors(self.model, page_size)
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
                batch = misses[i:i + v.batch_size]
                in_flight.append((batch, v.pool.submit([texts[h] for h in batch])))
                if len(in_flight) >= 2:
                    written = self._write_batch(*in_flight.popleft(), by_hash)
                    report.vectors_embedded += written
                    advance(written)
            while in_flight:
                batch, future = in_flight.popleft()
                if stopped and future.cancel():
                    continue  # not started yet: left pending for the next fill
                # started (or done): finish and keep it, nothing embedded is thrown away
                written = self._write_batch(batch, future, by_hash)
                report.vectors_embedded += written
                advance(written)
        report.vectors_pending = self.writer.count_pending_vectors(self.model)
        return report

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
