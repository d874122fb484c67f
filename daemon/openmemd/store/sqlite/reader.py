"""`SqliteReader`: the `store.base.StoreReader` of one SQLite index, on one read connection.

One per thread (the connection is the thread's). It only reads: the keyword leg is FTS5
(fts.py), the vector leg sqlite-vec KNN or the resident matrix (vector_leg.py), the counts and
exports plain SELECTs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

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
    Vector,
)
from openmemd.store.sqlite import export, file_state, fts, queries, schema, vector_leg
from openmemd.store.sqlite.db import Connection, VectorSupport
from openmemd.text.tokens import QueryTerms

# Paths per `IN (...)` of `file_mtimes`: far below SQLite's bound-parameter limit.
_GROUP = 500


class SqliteReader:
    """Reads of one index file through `conn` (opened by `db.connect`, whose `vec` it gets).

    `db_file` names the index file: the resident matrix is kept per file.
    """

    thread_safe = False  # one sqlite3 connection

    def __init__(self, conn: Connection, vec: VectorSupport, db_file: str) -> None:
        self.conn = conn
        self.vec = vec
        self.db_file = db_file

    # -- search legs ------------------------------------------------------------------------
    def keyword_candidates(self, terms: QueryTerms, *, limit: int,
                           where: CandidateFilter) -> list[MeasuredChunk]:
        return fts.keyword_candidates(self.conn, terms, limit=limit, where=where)

    def keyword_relevance(self, terms: QueryTerms, ids: Sequence[str]) -> dict[str, float]:
        return fts.keyword_relevance(self.conn, terms, ids)

    def vector_candidates(self, query: Vector, *, limit: int,
                          where: CandidateFilter) -> list[MeasuredChunk]:
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        return vector_leg.vector_candidates(self.conn, self.vec, self.db_file, q, limit=limit,
                                            where=where)

    def cosines(self, query: Vector, ids: Sequence[str], *, model: str) -> dict[str, float]:
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        return vector_leg.cosines(self.conn, self.vec, self.db_file, q, ids, model=model)

    def chunks_by_path(self, patterns: Sequence[str], *, limit: int,
                       where: CandidateFilter) -> list[MeasuredChunk]:
        return queries.chunks_by_path(self.conn, patterns, limit=limit, where=where)

    # -- files, meta, counts ----------------------------------------------------------------
    def file_mtimes(self, paths: Sequence[str]) -> dict[str, int]:
        wanted = list(dict.fromkeys(paths))
        out: dict[str, int] = {}
        for start in range(0, len(wanted), _GROUP):
            group = wanted[start:start + _GROUP]
            out.update((path, int(mtime)) for path, mtime in self.conn.execute(
                f"SELECT path, mtime FROM files WHERE path IN ({', '.join('?' * len(group))})",
                group))
        return out

    def stored_files(self) -> dict[str, StoredFile]:
        return {path: StoredFile(*row) for path, row in queries.load_files(self.conn).items()}

    def skipped_files(self) -> list[Skipped]:
        if not self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = "
                                 "'openmemd_skipped'").fetchone():
            return []  # made by the first skip (an index older than the table, or a reader's)
        return list(file_state.load_skipped(self.conn).values())

    def file_chunks(self, path: str, namespace: str) -> list[StoredChunk]:
        if namespace:  # one file, one agent: no other namespace
            return []
        return [StoredChunk(*row) for row in self.conn.execute(
            "SELECT source, start_line, end_line, text FROM chunks WHERE path = ?"
            " ORDER BY start_line, end_line", (path,))]

    def read_meta(self) -> dict[str, Any] | None:
        return schema.read_meta(self.conn)

    def count_pending_vectors(self, model: str, *, derived: bool = True) -> int:
        return queries.count_pending_vectors(self.conn, model, derived)

    def stats(self, model: str | None, *, derived: bool = True) -> IndexStats:
        counts = queries.counts(self.conn)
        pending = (queries.count_pending_vectors(self.conn, model, derived)
                   if model is not None else 0)
        return IndexStats(files=counts["files"], chunks=counts["chunks"],
                          cache_entries=counts["cache_entries"], vectors=counts["vectors"],
                          pending_vectors=pending, by_source=queries.counts_by_source(self.conn))

    # -- export -----------------------------------------------------------------------------
    def export_files(self) -> Iterator[StoredFileRecord]:
        return export.export_files(self.conn)

    def export_chunks(self) -> Iterator[ChunkRow]:
        return export.export_chunks(self.conn)

    def export_cache(self) -> Iterator[CacheEntry]:
        return export.export_cache(self.conn)
