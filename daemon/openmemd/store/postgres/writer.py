"""`StoreWriter` on PostgreSQL: one namespace's rows, written on the locked writer connection.

Every statement names the namespace; `ns_stats` (chunk count and token total per namespace,
BM25's N and avgdl) and `ns_lexemes` (n(q)) change in the same transaction as the chunks they
count. Inside a transaction, `replace_chunks` and `upsert_file` are collected and written a
batch at a time (bulk.py): before any other statement on the connection (so every read sees the
writer's own writes, exactly as if they had been written at once) and before the commit (so a
failure rolls the whole transaction back). Writes never create the HNSW index: a row inserted
into it costs tens of times a plain row (docs/postgres-scale.md), so `PgStore.maintain`
builds it, in the background, once a dimension has enough vectors to need it (see
schema.HNSW_MIN_VECTORS). Once it exists, every namespace's writes of that size pay that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

import numpy as np
import psycopg
from psycopg.abc import Params
from psycopg.rows import TupleRow

from openmemd.store.base import (
    CacheKey,
    ChunkRow,
    FileSignature,
    PendingChunk,
    PendingFile,
    Skipped,
    Vector,
)
from openmemd.store.meta import meta_to_text
from openmemd.store.postgres import bulk, fts, reader
from openmemd.store.postgres.connect import Outage, translated
from openmemd.store.postgres.schema import SCHEMA
from openmemd.store.postgres.session import WriterSession
from openmemd.store.postgres.tsvectors import Lexicon


class PgWriter:
    def __init__(self, session: WriterSession, ns: str, *, graph: bool = True,
                 outage: Outage | None = None, ready: Callable[[], None] | None = None) -> None:
        """`graph=False` writes vectors without their size (`dims` NULL), which keeps them out
        of the partial HNSW indexes: for a rebuild's staging rows, never searched, which join
        the graph once, when the swap sets their size (store.py), instead of twice."""
        self._session = session
        self.ns = ns
        self._graph = graph
        self.rows_written = 0
        self._batch = bulk.Batch()
        self._lexicon = Lexicon()
        self._in_transaction = False
        # The store's: a damaged schema seen here is noted in `outage` and repaired by `ready`
        # before the next statement outside a transaction.
        self._outage = outage
        self._ready = ready

    def _conn(self) -> psycopg.Connection[TupleRow]:
        return self._session.connection()

    def _exec(self, sql: str, params: Params | None = None) -> psycopg.Cursor[TupleRow]:
        with self._translated():
            self._flush()  # whatever runs next sees (or follows) the buffered writes
            return self._conn().execute(sql, params)

    def _flush(self) -> None:
        if not self._batch:
            return
        conn = self._conn()
        if self._in_transaction:
            bulk.flush(conn, self.ns, self._batch, self._lexicon)
            return
        try:  # a write outside transaction(): still all or nothing
            with conn.transaction():
                bulk.flush(conn, self.ns, self._batch, self._lexicon)
        finally:
            self._batch.clear()

    @contextmanager
    def _translated(self) -> Iterator[None]:
        if self._ready is not None and not self._in_transaction:
            self._ready()
        with self._outage.watch() if self._outage else nullcontext(), \
                translated(self._session.target, "writing to"):
            yield

    @contextmanager
    def transaction(self) -> Iterator[None]:
        # The batch holds only this block's writes: flushed at its start (nothing is pending
        # there by construction) and before its commit, dropped with a rollback.
        with self._translated():
            self._flush()
            outer = self._in_transaction
            self._in_transaction = True
            try:
                with self._conn().transaction():
                    yield
                    self._flush()
            finally:
                self._in_transaction = outer
                self._batch.clear()

    # -- files ----------------------------------------------------------------------------------
    def load_signatures(self) -> dict[str, FileSignature]:
        rows = self._exec(f"SELECT path, source, mtime, size, ctime_ns, ino FROM {SCHEMA}.files"
                          " WHERE ns = %s", (self.ns,)).fetchall()
        return {r[0]: FileSignature(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5]))
                for r in rows}

    def file_hash(self, path: str) -> str | None:
        row = self._exec(f"SELECT hash FROM {SCHEMA}.files WHERE ns = %s AND path = %s",
                         (self.ns, path)).fetchone()
        return None if row is None else str(row[0])

    def upsert_file(self, path: str, source: str, file_hash: str, mtime: int, size: int,
                    ctime_ns: int, ino: int) -> None:
        if self._in_transaction:
            self._batch.files[path] = (source, file_hash, mtime, size, ctime_ns, ino)
            return
        self._exec(
            f"INSERT INTO {SCHEMA}.files(ns, path, source, hash, mtime, size, ctime_ns, ino)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (ns, path) DO UPDATE SET"
            " source = excluded.source, hash = excluded.hash, mtime = excluded.mtime,"
            " size = excluded.size, ctime_ns = excluded.ctime_ns, ino = excluded.ino",
            (self.ns, path, source, file_hash, mtime, size, ctime_ns, ino))

    def touch_file(self, path: str, mtime: int, size: int, ctime_ns: int, ino: int) -> None:
        self._exec(f"UPDATE {SCHEMA}.files SET mtime = %s, size = %s, ctime_ns = %s, ino = %s"
                   " WHERE ns = %s AND path = %s", (mtime, size, ctime_ns, ino, self.ns, path))

    def delete_file(self, path: str) -> None:
        self._delete_chunks(path)
        self._exec(f"DELETE FROM {SCHEMA}.files WHERE ns = %s AND path = %s", (self.ns, path))

    # -- chunks and vectors ---------------------------------------------------------------------
    def _delete_chunks(self, path: str) -> None:
        self._exec(bulk.DELETE_PATHS, {"ns": self.ns, "paths": [path]})

    def replace_chunks(self, path: str, rows: Sequence[ChunkRow]) -> None:
        params = []
        for r in rows:
            vec = None if r.vector is None else np.asarray(r.vector, dtype=np.float32)
            params.append((r.id, r.path, r.source, r.start_line, r.end_line, r.hash, r.model,
                           r.text, fts.prepare(r.fts_text), vec, self._dims(vec),
                           r.updated_at))
        self._batch.replace(path, params)
        self.rows_written += len(rows)
        if not self._in_transaction or self._batch.rows >= bulk.FLUSH_ROWS:
            with self._translated():
                self._flush()

    def _dims(self, vec: np.ndarray | None) -> int | None:
        return None if vec is None or not self._graph else int(vec.shape[0])

    def pending_vectors(self, model: str, limit: int, paths: Sequence[str] | None = None
                        ) -> list[PendingChunk]:
        if paths is None:
            rows = self._exec(f"SELECT id, hash, text FROM {SCHEMA}.chunks WHERE ns = %s AND"
                              " model = %s AND embedding IS NULL ORDER BY id LIMIT %s",
                              (self.ns, model, limit)).fetchall()
        else:  # in the order of `paths`
            rows = self._exec(f"SELECT id, hash, text FROM {SCHEMA}.chunks WHERE ns = %s AND"
                              " model = %s AND embedding IS NULL AND path = ANY(%s) ORDER BY"
                              " array_position(%s, path), start_line LIMIT %s",
                              (self.ns, model, list(paths), list(paths), limit)).fetchall()
        return [PendingChunk(r[0], r[1], r[2]) for r in rows]

    def count_pending_vectors(self, model: str, *, derived: bool = True) -> int:
        with self._translated():
            self._flush()  # the buffered writes count too
            return reader.count_pending(self._conn(), self.ns, model, derived)

    def pending_files(self, model: str, *, derived: bool = True) -> list[PendingFile]:
        rows = self._exec(f"SELECT path, source, count(*) FROM {SCHEMA}.chunks WHERE ns = %s"
                          " AND model = %s AND embedding IS NULL"
                          + ("" if derived else reader.NOT_DERIVED) + " GROUP BY path, source",
                          (self.ns, model)).fetchall()
        return [PendingFile(r[0], r[1], int(r[2])) for r in rows]

    def set_vectors(self, vectors: Sequence[tuple[str, Vector]]) -> None:
        if not vectors:
            return
        params = []
        for cid, vector in vectors:
            vec = np.asarray(vector, dtype=np.float32)
            params.append((vec, self._dims(vec), self.ns, cid))
        with self._translated():
            self._flush()
            self._conn().cursor().executemany(
                f"UPDATE {SCHEMA}.chunks SET embedding = %s, dims = %s WHERE ns = %s AND id = %s",
                params)
        self.rows_written += len(params)

    # -- the embedding cache (shared by every namespace) ----------------------------------------
    def cache_lookup(self, key: CacheKey, hashes: Sequence[str]) -> dict[str, Vector]:
        if not hashes:
            return {}
        rows = self._exec(
            f"SELECT hash, embedding FROM {SCHEMA}.embedding_cache WHERE provider = %s AND"
            " model = %s AND provider_key = %s AND hash = ANY(%s)",
            (key.provider, key.model, key.provider_key, list(hashes))).fetchall()
        return {r[0]: v for r in rows if (v := reader._vector(r[1])) is not None}

    def cache_store(self, key: CacheKey, items: Sequence[tuple[str, Vector]],
                    now_ms: int) -> None:
        if not items:
            return
        params = [(key.provider, key.model, key.provider_key, h,
                   np.asarray(v, dtype=np.float32), int(np.asarray(v).shape[0]), now_ms)
                  for h, v in items]
        with self._translated():
            self._flush()
            self._conn().cursor().executemany(
                f"INSERT INTO {SCHEMA}.embedding_cache(provider, model, provider_key, hash,"
                " embedding, dims, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (provider, model, provider_key, hash) DO UPDATE SET"
                " embedding = excluded.embedding, dims = excluded.dims,"
                " updated_at = excluded.updated_at", params)

    def cache_prune(self, max_entries: int) -> int:
        """The cap applies to the shared cache (all namespaces); 0 = no cap."""
        if max_entries <= 0:
            return 0
        cur = self._exec(
            f"DELETE FROM {SCHEMA}.embedding_cache WHERE (provider, model, provider_key, hash)"
            f" IN (SELECT provider, model, provider_key, hash FROM {SCHEMA}.embedding_cache"
            " ORDER BY updated_at DESC, hash DESC OFFSET %s)", (max_entries,))
        return max(0, int(cur.rowcount))

    # -- meta and bookkeeping -------------------------------------------------------------------
    def read_meta(self) -> dict[str, Any] | None:
        with self._translated():
            self._flush()
            return reader.read_meta(self._conn(), self.ns)

    def write_meta(self, meta: Mapping[str, Any]) -> None:
        self._exec(f"INSERT INTO {SCHEMA}.ns_meta(ns, key, value) VALUES (%s, 'index', %s)"
                   " ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value",
                   (self.ns, meta_to_text(meta)))

    def load_skipped(self) -> dict[bytes, Skipped]:
        rows = self._exec(f"SELECT name, source, mtime, size, ctime_ns, ino, path, reason FROM"
                          f" {SCHEMA}.skipped WHERE ns = %s", (self.ns,)).fetchall()
        return {bytes(r[0]): Skipped((r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5])),
                                     r[6], r[7]) for r in rows}

    def set_skipped(self, name: bytes, skipped: Skipped) -> None:
        source, mtime, size, ctime_ns, ino = skipped.signature
        self._exec(
            f"INSERT INTO {SCHEMA}.skipped(ns, name, source, mtime, size, ctime_ns, ino, path,"
            " reason) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (ns, name) DO"
            " UPDATE SET source = excluded.source, mtime = excluded.mtime, size = excluded.size,"
            " ctime_ns = excluded.ctime_ns, ino = excluded.ino, path = excluded.path,"
            " reason = excluded.reason",
            (self.ns, name, source, mtime, size, ctime_ns, ino, skipped.path, skipped.reason))

    def delete_skipped(self, name: bytes) -> None:
        self._exec(f"DELETE FROM {SCHEMA}.skipped WHERE ns = %s AND name = %s", (self.ns, name))
