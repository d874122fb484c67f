"""`StoreWriter` on SQLite: the write API of one index file, over one open connection.

Vectors arrive as float32 arrays and are stored as OpenClaw does: JSON array text in
`chunks.embedding` and `embedding_cache`, and (when sqlite-vec loaded) a float32 blob in the
`chunks_vec` vec0 table, created for the vectors' size on the first one. Every method raises
the interface's errors (store/sqlite/boundary.py), never the driver's.

The writer also keeps a copy of the `files` table with its signals: a no-op sync then costs a
stat walk, not a read of every row (38k on a large workspace). It is filled on first use and
updated only when a transaction commits, so it never shows a rolled-back write.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np

from openmemd.store.base import (
    CacheKey,
    ChunkRow,
    FileSignature,
    PendingChunk,
    PendingFile,
    Skipped,
    Vector,
)
from openmemd.store.sqlite import cache as embed_cache
from openmemd.store.sqlite import db, file_state, queries, schema
from openmemd.store.sqlite.boundary import translated

P = ParamSpec("P")
R = TypeVar("R")
Files = dict[str, FileSignature]


def _at_boundary(method: Callable[P, R]) -> Callable[P, R]:
    """Translate the driver's errors of a writer method (see store/sqlite/boundary.py)."""
    @functools.wraps(method)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        self = args[0]
        with translated(self.db_path):  # type: ignore[attr-defined]
            return method(*args, **kwargs)
    return run


class SqliteWriter:
    """Writes one index through `conn` (opened by `SqliteStore`, or a rebuild's temp file)."""

    def __init__(self, conn: db.Connection, vec: db.VectorSupport, db_path: Path) -> None:
        self.conn = conn
        self.vec = vec
        # The live index's path, also while a rebuild fills a temp file beside it: errors
        # name it, and its filesystem is the one checked for space.
        self.db_path = db_path
        self._vec_dims: int | None = None  # chunks_vec checked/created for this size
        self._tables_ready = False  # openmemd's own tables (file_state) checked
        self._files: Files | None = None  # the `files` table, once read
        # Paths given chunks while they had no `files` row (see replace_chunks).
        self._chunked_new: set[str] = set()
        # Inside a transaction: changes to `_files`, applied when it commits.
        self._pending: list[Callable[[Files], None]] | None = None

    # -- transactions ------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        if self._pending is not None:
            raise RuntimeError("StoreWriter.transaction() is not re-entrant")
        pending: list[Callable[[Files], None]] = []
        self._pending = pending
        try:
            with translated(self.db_path), db.write_transaction(self.conn):
                yield
        except BaseException:
            self._vec_dims = None  # a vec0 table created in it was rolled back too
            raise
        finally:
            self._pending = None
        if self._files is not None:
            for change in pending:
                change(self._files)

    def _changed(self, change: Callable[[Files], None]) -> None:
        if self._pending is not None:
            self._pending.append(change)
        elif self._files is not None:  # autocommit: already committed
            change(self._files)

    def _ensure_tables(self) -> None:
        if not self._tables_ready:
            file_state.ensure_tables(self.conn)
            self._tables_ready = True

    def _ensure_vec(self, dims: int) -> None:
        if self._vec_dims != dims:
            schema.ensure_vec_table(self.conn, dims)
            self._vec_dims = dims

    # -- files -------------------------------------------------------------------------------
    @_at_boundary
    def load_signatures(self) -> dict[str, FileSignature]:
        if self._files is None:
            self._ensure_tables()
            self._files = file_state.load_signatures(self.conn)
        return dict(self._files)

    @_at_boundary
    def file_hash(self, path: str) -> str | None:
        return queries.file_hash(self.conn, path)

    @_at_boundary
    def upsert_file(self, path: str, source: str, file_hash: str, mtime: int, size: int,
                    ctime_ns: int, ino: int) -> None:
        self._ensure_tables()
        queries.upsert_file(self.conn, path, source, file_hash, mtime, size)
        file_state.set_signals(self.conn, path, ctime_ns, ino)
        row = FileSignature(path, source, mtime, size, ctime_ns, ino)
        self._changed(lambda files: files.__setitem__(path, row))

    @_at_boundary
    def touch_file(self, path: str, mtime: int, size: int, ctime_ns: int, ino: int) -> None:
        self._ensure_tables()
        queries.touch_file(self.conn, path, mtime, size)
        file_state.set_signals(self.conn, path, ctime_ns, ino)

        def change(files: Files) -> None:
            old = files.get(path)
            if old is not None:  # no `files` row: the UPDATE changed nothing either
                files[path] = old._replace(mtime=mtime, size=size, ctime_ns=ctime_ns, ino=ino)

        self._changed(change)

    @_at_boundary
    def delete_file(self, path: str) -> None:
        self._ensure_tables()
        queries.delete_file(self.conn, path, vec=self.vec.available)
        file_state.delete_signals(self.conn, path)

        def change(files: Files) -> None:
            files.pop(path, None)

        self._changed(change)

    # -- chunks and vectors ------------------------------------------------------------------
    @_at_boundary
    def replace_chunks(self, path: str, rows: Sequence[ChunkRow]) -> None:
        if self._files is None or path in self._files or path in self._chunked_new:
            queries.delete_chunks(self.conn, path, vec=self.vec.available)
        else:
            # Chunks exist only for files with a row, so a path new to the index has none to
            # remove: skipping the deletes saves a sixth of a first index's write time.
            self._chunked_new.add(path)
        queries.insert_chunks(self.conn, [queries.SqliteChunkRow(
            id=r.id, path=r.path, source=r.source, start_line=r.start_line,
            end_line=r.end_line, hash=r.hash, model=r.model, text=r.text, fts_text=r.fts_text,
            embedding=(embed_cache.vector_to_json(r.vector) if r.vector is not None
                       else schema.EMPTY_EMBEDDING),
            updated_at=r.updated_at) for r in rows])
        if self.vec.available:
            for r in rows:
                if r.vector is not None:
                    self._ensure_vec(len(r.vector))
                    self.conn.execute("INSERT INTO chunks_vec(id, embedding) VALUES (?, ?)",
                                      (r.id, embed_cache.vector_to_blob(r.vector)))

    @_at_boundary
    def pending_vectors(self, model: str, limit: int, paths: Sequence[str] | None = None
                        ) -> list[PendingChunk]:
        return [PendingChunk(*r) for r in queries.pending_vectors(self.conn, model, limit,
                                                                  paths)]

    @_at_boundary
    def count_pending_vectors(self, model: str, *, derived: bool = True) -> int:
        return int(queries.count_pending_vectors(self.conn, model, derived))

    @_at_boundary
    def pending_files(self, model: str, *, derived: bool = True) -> list[PendingFile]:
        return [PendingFile(*r) for r in queries.pending_files(self.conn, model, derived)]

    @_at_boundary
    def set_vectors(self, vectors: Sequence[tuple[str, Vector]]) -> None:
        # Chunks of the same text share one vector object: encode it once.
        encoded: dict[int, tuple[str, bytes | None]] = {}
        for chunk_id, vector in vectors:
            key = id(vector)
            if key not in encoded:
                blob = None
                if self.vec.available:
                    self._ensure_vec(len(vector))
                    blob = embed_cache.vector_to_blob(vector)
                encoded[key] = (embed_cache.vector_to_json(vector), blob)
            queries.set_embedding(self.conn, chunk_id, *encoded[key])

    # -- the embedding cache -----------------------------------------------------------------
    @_at_boundary
    def cache_lookup(self, key: CacheKey, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        if not hashes:
            return {}
        return embed_cache.lookup(self.conn, key.provider, key.model, key.provider_key,
                                  list(hashes))

    @_at_boundary
    def cache_store(self, key: CacheKey, items: Sequence[tuple[str, Vector]],
                    now_ms: int) -> None:
        embed_cache.store(self.conn, key.provider, key.model, key.provider_key, list(items),
                          now_ms)

    @_at_boundary
    def cache_prune(self, max_entries: int) -> int:
        return embed_cache.prune(self.conn, max_entries)

    # -- meta and bookkeeping ----------------------------------------------------------------
    @_at_boundary
    def read_meta(self) -> dict[str, Any] | None:
        return schema.read_meta(self.conn)

    @_at_boundary
    def write_meta(self, meta: Mapping[str, Any]) -> None:
        schema.write_meta(self.conn, dict(meta))

    @_at_boundary
    def load_skipped(self) -> dict[bytes, Skipped]:
        self._ensure_tables()
        return file_state.load_skipped(self.conn)

    @_at_boundary
    def set_skipped(self, name: bytes, skipped: Skipped) -> None:
        self._ensure_tables()
        file_state.set_skipped(self.conn, name, skipped)

    @_at_boundary
    def delete_skipped(self, name: bytes) -> None:
        self._ensure_tables()
        file_state.delete_skipped(self.conn, name)
