"""`StoreReader` on PostgreSQL: search legs, point lookups, stats and export.

A reader borrows a pooled connection per call (autocommit, statement timeout), so a broken
connection is replaced by the pool and the next call after an outage simply works.

Ids: a chunk of the own namespace keeps its id (OpenClaw's, the same as on SQLite); a chunk of
another searched namespace is returned as `<id>@<namespace>`, so two namespaces indexing the
same file cannot collide in fusion, and `cosines`/`keyword_relevance` take those ids back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np
import psycopg
from psycopg.rows import TupleRow

from openmemd.store.base import (
    FTS_ONLY_MODEL,
    CacheEntry,
    CacheKey,
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
from openmemd.store.derived import DERIVED_PREFIX
from openmemd.store.meta import meta_from_text
from openmemd.store.postgres import keyword
from openmemd.store.postgres.connect import (
    Outage,
    PgConnectSpec,
    Pool,
    SchemaDamagedError,
    translated,
)
from openmemd.store.postgres.generation import ContentGeneration
from openmemd.store.postgres.schema import SCHEMA
from openmemd.text.tokens import QueryTerms, fts_index_text

EXPORT_BATCH = 500
# The vector leg reads this many times `limit` nearest by the index's halfvec distance and keeps
# the best `limit` by float32 distance.
RERANK_FACTOR = 2
T = TypeVar("T")


class PgReader:
    thread_safe = True  # a pooled connection per call

    def __init__(self, pool: Pool, target: PgConnectSpec, ns: str,
                 search_ns: Sequence[str], ready: Callable[[], None], outage: Outage,
                 generation: ContentGeneration) -> None:
        self._pool = pool
        self._outage = outage
        self._generation = generation
        self._target = target
        self.ns = ns
        self.search_ns = list(search_ns)
        self._ready = ready  # ensures the schema exists (first use after start or outage)
        self._plans = keyword.PlanMemo()

    def _run(self, fn: Callable[[psycopg.Connection[TupleRow]], T], *, search: bool = False) -> T:
        """`fn` on a pooled connection, the schema ensured. `search`: a search leg, which also
        hears of a repair that emptied the namespace (generation.py) -- only searches, whose
        damage the daemon answers by re-indexing; status and the rest must not swallow it."""
        with self._outage.watch():
            self._outage.check()
            self._ready()
            try:
                with translated(self._target, "reading from"), self._pool.connection() as conn:
                    if search:
                        self._generation.check(conn)
                    return fn(conn)
            except SchemaDamagedError:
                if search:
                    self._generation.reported()
                raise

    # -- ids across namespaces ------------------------------------------------------------------
    def _public_id(self, ns: str, cid: str) -> str:
        return cid if ns == self.ns else f"{cid}@{ns}"

    def _keys(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        out = []
        for public in ids:
            cid, sep, ns = public.partition("@")
            out.append((ns if sep else self.ns, cid))
        return out

    # -- search legs ----------------------------------------------------------------------------
    def keyword_candidates(self, terms: QueryTerms, *, limit: int,
                           where: CandidateFilter) -> list[MeasuredChunk]:
        found = self._run(lambda c: keyword.candidates(c, terms, self.search_ns, limit=limit,
                                                        where=where, plans=self._plans),
                          search=True)
        return [MeasuredChunk(id=self._public_id(s.ns, s.id), path=r[0], source=r[1],
                              start_line=int(r[2]), end_line=int(r[3]), text=r[4],
                              measure=s.relevance, namespace=s.ns) for s, r in found]

    def keyword_relevance(self, terms: QueryTerms, ids: Sequence[str]) -> dict[str, float]:
        if not ids or not terms:
            return {}
        keys = self._keys(ids)
        scored = self._run(lambda c: keyword.score(c, terms, self.search_ns, None, ids=keys,
                                                   plans=self._plans))
        return {self._public_id(s.ns, s.id): s.relevance for s in scored}

    def vector_candidates(self, query: Vector, *, limit: int,
                          where: CandidateFilter) -> list[MeasuredChunk]:
        dims = int(query.shape[0])
        if limit <= 0 or dims == 0 or where.model == FTS_ONLY_MODEL:
            return []
        cond, params = _filter_sql(where)
        # The inner ORDER BY is the halfvec distance alone, so the HNSW index (on halfvec) can
        # serve it; its best RERANK_FACTOR x limit are re-ranked by the float32 distance (exact
        # scores, and near-ties the index's half precision may have swapped put back), ties by
        # id; the float32 distance and the text are read for those rows only (an exact scan,
        # below the HNSW threshold, would otherwise compute both distances for every row).
        sql = (f"SELECT c.ns, c.id, c.path, c.source, c.start_line, c.end_line, c.text,"
               f" c.embedding::vector({dims}) <=> %(q)s::vector({dims}) AS d"
               f" FROM (SELECT ns, id FROM {SCHEMA}.chunks WHERE dims = {dims}"
               f" AND ns = ANY(%(ns)s){cond}"
               f" ORDER BY embedding::halfvec({dims}) <=> %(q)s::halfvec({dims})"
               f" LIMIT %(pool)s) x JOIN {SCHEMA}.chunks c ON c.ns = x.ns AND c.id = x.id"
               " ORDER BY d, c.id LIMIT %(limit)s")
        params.update(q=np.asarray(query, dtype=np.float32), ns=self.search_ns, limit=limit,
                      pool=RERANK_FACTOR * limit)
        rows = self._run(lambda c: c.execute(sql, params).fetchall(), search=True)
        return [MeasuredChunk(id=self._public_id(r[0], r[1]), path=r[2], source=r[3],
                              start_line=int(r[4]), end_line=int(r[5]), text=r[6],
                              measure=1.0 - float(r[7]), namespace=r[0]) for r in rows]

    def cosines(self, query: Vector, ids: Sequence[str], *, model: str) -> dict[str, float]:
        dims = int(query.shape[0])
        if not ids or dims == 0:
            return {}
        keys = self._keys(ids)
        rows = self._run(lambda c: c.execute(
            f"SELECT ns, id, 1 - (embedding::vector({dims}) <=> %s::vector({dims}))"
            f" FROM {SCHEMA}.chunks WHERE (ns, id) IN"
            " (SELECT * FROM unnest(%s::text[], %s::text[]))"
            f" AND model = %s AND dims = {dims}",
            (np.asarray(query, dtype=np.float32), [k[0] for k in keys], [k[1] for k in keys],
             model)).fetchall())
        return {self._public_id(r[0], r[1]): float(r[2]) for r in rows}

    def chunks_by_path(self, patterns: Sequence[str], *, limit: int,
                       where: CandidateFilter) -> list[MeasuredChunk]:
        """See `StoreReader.chunks_by_path`: the paths matched in `files` (a row per file), the
        chunks read through `chunks_ns_path`, in every searched namespace."""
        if not patterns or limit <= 0:
            return []
        cond, params = _filter_sql(where)
        sql = (f"SELECT ns, id, path, source, start_line, end_line, text FROM {SCHEMA}.chunks"
               f" WHERE (ns, path) IN (SELECT ns, path FROM {SCHEMA}.files"
               f" WHERE ns = ANY(%(ns)s) AND path LIKE ANY(%(like)s)){cond}"
               " ORDER BY path COLLATE \"C\" DESC, start_line, ns, id LIMIT %(limit)s")
        params.update(ns=self.search_ns, like=[_like(p) for p in patterns], limit=limit)
        rows = self._run(lambda c: c.execute(sql, params).fetchall(), search=True)
        return [MeasuredChunk(id=self._public_id(r[0], r[1]), path=r[2], source=r[3],
                              start_line=int(r[4]), end_line=int(r[5]), text=r[6], measure=0.0,
                              namespace=r[0]) for r in rows]

    # -- files, meta, stats ---------------------------------------------------------------------
    def file_mtimes(self, paths: Sequence[str]) -> dict[str, int]:
        if not paths:
            return {}
        rows = self._run(lambda c: c.execute(
            f"SELECT path, mtime FROM {SCHEMA}.files WHERE ns = %s AND path = ANY(%s)",
            (self.ns, list(paths))).fetchall())
        return {r[0]: int(r[1]) for r in rows}

    def stored_files(self) -> dict[str, StoredFile]:
        rows = self._run(lambda c: c.execute(
            f"SELECT path, source, mtime, size FROM {SCHEMA}.files WHERE ns = %s",
            (self.ns,)).fetchall())
        return {r[0]: StoredFile(r[0], r[1], int(r[2]), int(r[3])) for r in rows}

    def skipped_files(self) -> list[Skipped]:
        rows = self._run(lambda c: c.execute(
            f"SELECT source, mtime, size, ctime_ns, ino, path, reason FROM {SCHEMA}.skipped "
            "WHERE ns = %s", (self.ns,)).fetchall())
        return [Skipped((r[0], int(r[1]), int(r[2]), int(r[3]), int(r[4])), r[5], r[6])
                for r in rows]

    def file_chunks(self, path: str, namespace: str) -> list[StoredChunk]:
        ns = namespace or self.ns
        if ns not in self.search_ns and ns != self.ns:
            return []
        rows = self._run(lambda c: c.execute(
            f"SELECT source, start_line, end_line, text FROM {SCHEMA}.chunks"
            " WHERE ns = %s AND path = %s ORDER BY start_line, end_line", (ns, path)).fetchall())
        return [StoredChunk(r[0], int(r[1]), int(r[2]), r[3]) for r in rows]

    def read_meta(self) -> dict[str, Any] | None:
        return self._run(lambda c: read_meta(c, self.ns))

    def stats(self, model: str | None, *, derived: bool = True) -> IndexStats:
        return self._run(lambda c: stats(c, self.ns, model, derived))

    def count_pending_vectors(self, model: str, *, derived: bool = True) -> int:
        return self._run(lambda c: count_pending(c, self.ns, model, derived))

    # -- export ---------------------------------------------------------------------------------
    def export_files(self) -> Iterator[StoredFileRecord]:
        for r in self._stream(f"SELECT path, source, hash, mtime, size, ctime_ns, ino FROM "
                              f"{SCHEMA}.files", "path", (0,)):
            yield StoredFileRecord(r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5]), int(r[6]))

    def export_chunks(self) -> Iterator[ChunkRow]:
        for r in self._stream(f"SELECT id, path, source, start_line, end_line, hash, model,"
                              f" text, embedding, updated_at FROM {SCHEMA}.chunks",
                              "path, id", (1, 0)):
            yield ChunkRow(id=r[0], path=r[1], source=r[2], start_line=int(r[3]),
                           end_line=int(r[4]), hash=r[5], model=r[6], text=r[7],
                           fts_text=fts_index_text(r[7]), vector=_vector(r[8]),
                           updated_at=int(r[9]))

    def export_cache(self) -> Iterator[CacheEntry]:
        sql = (f"SELECT provider, model, provider_key, hash, embedding, updated_at"
               f" FROM {SCHEMA}.embedding_cache")
        after: tuple[str, str, str, str] | None = None
        while True:
            cond = ("" if after is None else
                    " WHERE (provider, model, provider_key, hash) > (%s, %s, %s, %s)")
            params: tuple[Any, ...] = after or ()
            page = f"{sql}{cond} ORDER BY provider, model, provider_key, hash LIMIT {EXPORT_BATCH}"
            rows = self._fetch(page, params)
            for r in rows:
                vec = _vector(r[4])
                yield CacheEntry(CacheKey(r[0], r[1], r[2]), r[3],
                                 np.zeros(0, np.float32) if vec is None else vec, int(r[5]))
            if len(rows) < EXPORT_BATCH:
                return
            after = (rows[-1][0], rows[-1][1], rows[-1][2], rows[-1][3])

    def _fetch(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._run(lambda c: c.execute(sql, params).fetchall())

    def _stream(self, select: str, order: str, key: tuple[int, ...]
                ) -> Iterator[tuple[Any, ...]]:
        """Keyset pagination over the own namespace in `order` (columns that are unique
        together; `key`: their positions in the selected row), so no server cursor stays open
        while the caller consumes rows. The last key goes as one parameter per column: a
        tuple would be sent as an anonymous record, which PostgreSQL cannot take as input."""
        after: tuple[Any, ...] | None = None
        placeholders = ", ".join("%s" for _ in key)
        while True:
            cond = "" if after is None else f" AND ({order}) > ({placeholders})"
            params: tuple[Any, ...] = (self.ns, *(after or ()))
            sql = f"{select} WHERE ns = %s{cond} ORDER BY {order} LIMIT {EXPORT_BATCH}"
            rows = self._fetch(sql, params)
            yield from rows
            if len(rows) < EXPORT_BATCH:
                return
            after = tuple(rows[-1][i] for i in key)


def _filter_sql(where: CandidateFilter) -> tuple[str, dict[str, Any]]:
    cond = ""
    params: dict[str, Any] = {}
    if where.sources is not None:
        cond += " AND source = ANY(%(sources)s)"
        params["sources"] = list(where.sources)
    if where.model is not None:
        cond += " AND model = %(model)s"
        params["model"] = where.model
    if where.skip_derived:
        cond += " AND NOT starts_with(path, %(derived)s)"
        params["derived"] = DERIVED_PREFIX
    return cond, params


def _like(pattern: str) -> str:
    """A `chunks_by_path` pattern as LIKE (escape character `\\`): `*` becomes `%`, LIKE's own
    wildcards match themselves."""
    return "%".join(re.sub(r"([\\%_])", r"\\\1", part) for part in pattern.split("*"))


def _vector(value: Any) -> Vector | None:
    if value is None:
        return None
    return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value,
                      dtype=np.float32)


def read_meta(conn: psycopg.Connection[TupleRow], ns: str) -> dict[str, Any] | None:
    row = conn.execute(f"SELECT value FROM {SCHEMA}.ns_meta WHERE ns = %s AND key = 'index'",
                       (ns,)).fetchone()
    return None if row is None else meta_from_text(row[0])


# Chunks of derived files (store/derived.py), left out of the pending ones unless asked for.
NOT_DERIVED = f" AND left(path, {len(DERIVED_PREFIX)}) <> '{DERIVED_PREFIX}'"


def count_pending(conn: psycopg.Connection[TupleRow], ns: str, model: str,
                  derived: bool = True) -> int:
    row = conn.execute(f"SELECT count(*) FROM {SCHEMA}.chunks WHERE ns = %s AND model = %s"
                       " AND embedding IS NULL" + ("" if derived else NOT_DERIVED),
                       (ns, model)).fetchone()
    return int(row[0]) if row else 0


def stats(conn: psycopg.Connection[TupleRow], ns: str, model: str | None,
          derived: bool = True) -> IndexStats:
    by_source: dict[str, dict[str, int]] = {}
    for source, n in conn.execute(f"SELECT source, count(*) FROM {SCHEMA}.files WHERE ns = %s"
                                  " GROUP BY source", (ns,)):
        by_source.setdefault(source, {"files": 0, "chunks": 0})["files"] = int(n)
    row = conn.execute(
        f"SELECT source, count(*), count(embedding), count(*) FILTER (WHERE embedding IS NULL"
        f" AND model = %s{'' if derived else NOT_DERIVED}) FROM {SCHEMA}.chunks WHERE ns = %s"
        " GROUP BY source",
        (model or "", ns)).fetchall()
    vectors = pending = 0
    for source, n, with_vec, waiting in row:
        by_source.setdefault(source, {"files": 0, "chunks": 0})["chunks"] = int(n)
        vectors += int(with_vec)
        pending += int(waiting)
    cache = conn.execute(f"SELECT count(*) FROM {SCHEMA}.embedding_cache").fetchone()
    return IndexStats(files=sum(v["files"] for v in by_source.values()),
                      chunks=sum(v["chunks"] for v in by_source.values()),
                      cache_entries=int(cache[0]) if cache else 0, vectors=vectors,
                      pending_vectors=pending if model and model != FTS_ONLY_MODEL else 0,
                      by_source=by_source)
