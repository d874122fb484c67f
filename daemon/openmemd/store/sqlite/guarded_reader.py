"""A thread's `SqliteReader` behind the store's error boundary.

Every read goes through `SqliteStore.reading`: callers see the interface's errors
(`IndexDamagedError`, `DiskFullError`, ...), never the driver's, and a damaged file is
remembered for the writer to confirm and heal. Exports are streamed, so each row fetched is
guarded too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, ParamSpec, TypeVar

from openmemd.store.base import (
    CacheEntry,
    CandidateFilter,
    ChunkRow,
    IndexStats,
    MeasuredChunk,
    Skipped,
    StoredChunk,
    StoredFile,
    StoredFileRecord,
    StoreReader,
    Vector,
)
from openmemd.text.tokens import QueryTerms

T = TypeVar("T")
P = ParamSpec("P")


class GuardedReader:
    """`store.base.StoreReader`, delegating to `inner` inside `guard()`."""

    def __init__(self, inner: StoreReader,
                 guard: Callable[[], AbstractContextManager[None]]) -> None:
        self.inner = inner
        self._guard = guard
        self.thread_safe = inner.thread_safe

    def _call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        with self._guard():
            return fn(*args, **kwargs)

    def _stream(self, rows: Callable[[], Iterator[T]]) -> Iterator[T]:
        with self._guard():
            it = rows()
        while True:
            with self._guard():
                try:
                    row = next(it)
                except StopIteration:
                    return
            yield row

    def keyword_candidates(self, terms: QueryTerms, *, limit: int,
                           where: CandidateFilter) -> list[MeasuredChunk]:
        return self._call(self.inner.keyword_candidates, terms, limit=limit, where=where)

    def keyword_relevance(self, terms: QueryTerms, ids: Sequence[str]) -> dict[str, float]:
        return self._call(self.inner.keyword_relevance, terms, ids)

    def vector_candidates(self, query: Vector, *, limit: int,
                          where: CandidateFilter) -> list[MeasuredChunk]:
        return self._call(self.inner.vector_candidates, query, limit=limit, where=where)

    def cosines(self, query: Vector, ids: Sequence[str], *, model: str) -> dict[str, float]:
        return self._call(self.inner.cosines, query, ids, model=model)

    def chunks_by_path(self, patterns: Sequence[str], *, limit: int,
                       where: CandidateFilter) -> list[MeasuredChunk]:
        return self._call(self.inner.chunks_by_path, patterns, limit=limit, where=where)

    def file_mtimes(self, paths: Sequence[str]) -> dict[str, int]:
        return self._call(self.inner.file_mtimes, paths)

    def stored_files(self) -> dict[str, StoredFile]:
        return self._call(self.inner.stored_files)

    def skipped_files(self) -> list[Skipped]:
        return self._call(self.inner.skipped_files)

    def file_chunks(self, path: str, namespace: str) -> list[StoredChunk]:
        return self._call(self.inner.file_chunks, path, namespace)

    def read_meta(self) -> dict[str, Any] | None:
        return self._call(self.inner.read_meta)

    def stats(self, model: str | None, *, derived: bool = True) -> IndexStats:
        return self._call(self.inner.stats, model, derived=derived)

    def count_pending_vectors(self, model: str, *, derived: bool = True) -> int:
        return self._call(self.inner.count_pending_vectors, model, derived=derived)

    def export_files(self) -> Iterator[StoredFileRecord]:
        return self._stream(self.inner.export_files)

    def export_chunks(self) -> Iterator[ChunkRow]:
        return self._stream(self.inner.export_chunks)

    def export_cache(self) -> Iterator[CacheEntry]:
        return self._stream(self.inner.export_cache)
