"""Vector leg: nearest chunks by cosine similarity, with sqlite-vec KNN or numpy in process.

With sqlite-vec, `chunks_vec` is queried with `embedding MATCH ? AND k = ?` (KNN; the table
uses the cosine metric, so similarity = 1 − distance). It is never scanned with
`vec_distance_cosine` (~190× slower on large indexes, OpenClaw #69666). Rows of other models
or of unwanted sources are filtered after the KNN step, so k is oversampled when filtering
and widened until enough rows survive. In a long-lived process (the daemon, see
`resident.enable`) the same leg is answered from a resident numpy matrix of the same vectors,
kept current by the index's change log (search/resident.py): same rows, same order, ~7× faster.
When sqlite-vec is unavailable, `chunks_vec` is missing, or its dimension does not match the
query, the resident matrix is filled from `chunks.embedding` (JSON) instead; a database without
the change log falls back to numpy over a matrix cached per database, model and sources until
the index changes.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from openmemd.search.results import LegHit
from openmemd.store.derived import is_derived
from openmemd.store.sqlite import resident
from openmemd.store.sqlite.db import Connection, OperationalError, VectorSupport
from openmemd.store.sqlite.schema import SQL_NOT_DERIVED

KNN_K_MAX = 4096  # sqlite-vec's upper bound for k
OVERSAMPLE = 8  # k = limit × this when rows may be filtered out after the KNN step
_DIMS = re.compile(r"float\[\s*(\d+)\s*\]")


def normalise_query(vector: object) -> np.ndarray | None:
    """float32 unit vector, or None for an empty, zero or non-finite vector."""
    if vector is None:
        return None
    q = np.asarray(vector, dtype=np.float32).reshape(-1)
    if q.size == 0 or not np.all(np.isfinite(q)):
        return None
    norm = float(np.linalg.norm(q))
    if norm == 0.0:
        return None
    return q / norm


def vec_table_dims(conn: Connection) -> int | None:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_vec'").fetchone()
    if row is None or not row[0]:
        return None
    m = _DIMS.search(row[0])
    return int(m.group(1)) if m else None


def vector_search(conn: Connection, query_vector: object, *, model: str, limit: int,
                  vec: VectorSupport, sources: Sequence[str] | None = None,
                  cache: MatrixCache | None = None, skip_derived: bool = False) -> list[LegHit]:
    """The `limit` chunks of `model` most similar to the query, best first (score = cosine)."""
    q = normalise_query(query_vector)
    if q is None or limit <= 0:
        return []
    if vec.available and vec_table_dims(conn) == q.size:
        if resident.enabled():
            hits = _resident_search(conn, q, from_vec_table=True, model=model, limit=limit,
                                    sources=sources, skip_derived=skip_derived)
            if hits is not None:
                return hits
        try:
            return _knn_search(conn, q, model=model, limit=limit, sources=sources,
                               skip_derived=skip_derived)
        except OperationalError:
            pass  # e.g. a damaged vec0 table: the JSON copy in `chunks` still works
    # In process: the resident matrix read from the JSON copy once, then kept by deltas.
    hits = _resident_search(conn, q, from_vec_table=False, model=model, limit=limit,
                            sources=sources, skip_derived=skip_derived)
    if hits is not None:
        return hits
    return numpy_search(conn, q, model=model, limit=limit, sources=sources,
                        cache=cache if cache is not None else DEFAULT_CACHE,
                        skip_derived=skip_derived)


def similarities_for(conn: Connection, query_vector: object, ids: Sequence[str], *,
                     model: str, vec: VectorSupport) -> dict[str, float]:
    """Cosine similarity of the query to specific chunks (those the KNN step did not return).

    Point lookups by id (vec0 primary key, or the `chunks.embedding` JSON), never a scan.
    """
    q = normalise_query(query_vector)
    if q is None or not ids:
        return {}
    if vec.available and resident.enabled() and vec_table_dims(conn) == q.size:
        found = resident.cosines(conn, _db_file(conn), q, ids, model=model, from_vec_table=True)
        if found is not None:
            return found
    out: dict[str, float] = {}
    wanted = {r[0] for r in conn.execute(
        f"SELECT id FROM chunks WHERE model = ? AND id IN ({', '.join('?' * len(ids))})",
        [model, *ids])}
    if vec.available and vec_table_dims(conn) == q.size:
        try:
            for cid in wanted:
                row = conn.execute("SELECT embedding FROM chunks_vec WHERE id = ?",
                                   (cid,)).fetchone()
                if row is not None and row[0] is not None:
                    v = np.frombuffer(row[0], dtype=np.float32)
                    out[cid] = _cosine(v, q)
        except OperationalError:
            out.clear()
    missing = [cid for cid in wanted if cid not in out]
    if missing:
        for cid, raw in conn.execute(
                f"SELECT id, embedding FROM chunks WHERE id IN ({', '.join('?' * len(missing))})",
                missing):
            try:
                v = np.asarray(json.loads(raw), dtype=np.float32) if raw else None
            except (TypeError, ValueError):
                continue
            if v is not None and v.size == q.size:
                out[cid] = _cosine(v, q)
    return out


def _cosine(v: np.ndarray, q: np.ndarray) -> float:
    norm = float(np.linalg.norm(v))
    return float(v @ q) / norm if norm > 0 else 0.0


def _resident_search(conn: Connection, q: np.ndarray, *, from_vec_table: bool, model: str,
                     limit: int, sources: Sequence[str] | None, skip_derived: bool
                     ) -> list[LegHit] | None:
    hits: list[LegHit] = []
    for _attempt in range(3):
        # A few spare rows: a chunk deleted since the matrix was refreshed is skipped below;
        # when more than that went, the next attempt refreshes (and sees the delete).
        want = limit + 8
        found = resident.nearest(conn, _db_file(conn), q, from_vec_table=from_vec_table,
                                 model=model, limit=want, sources=sources,
                                 skip_derived=skip_derived)
        if found is None:
            return None
        hits = _leg_hits(conn, found)
        if len(hits) >= limit or len(found) < want:
            break
    return hits[:limit]


def _leg_hits(conn: Connection, found: list[tuple[str, int, float]]) -> list[LegHit]:
    if not found:
        return []
    # One point lookup per row: with statistics from when the index was small, SQLite plans
    # `rowid IN (...)` (or a join on rowid) over 100k chunks as a full scan; `rowid = ?` is
    # always a b-tree search.
    details = {}
    for _cid, rowid, _cosine in found:
        row = conn.execute("SELECT rowid, id, path, source, start_line, end_line, text "
                           "FROM chunks WHERE rowid = ?", (rowid,)).fetchone()
        if row is not None:
            details[rowid] = row
    hits = []
    for cid, rowid, cosine in found:
        row = details.get(rowid)
        if row is not None and row[1] == cid:  # else deleted since the matrix was refreshed
            hits.append(LegHit(id=cid, path=row[2], source=row[3], start_line=int(row[4]),
                               end_line=int(row[5]), text=row[6], score=cosine, raw=cosine))
    return hits


# -- sqlite-vec KNN ------------------------------------------------------------------------------

_KNN_SQL = (
    "WITH knn AS MATERIALIZED ("
    "  SELECT id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?) "
    "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, c.model, knn.distance "
    "FROM knn LEFT JOIN chunks AS c ON c.id = knn.id ORDER BY knn.distance, knn.id"
)


def _knn_search(conn: Connection, q: np.ndarray, *, model: str, limit: int,
                sources: Sequence[str] | None, skip_derived: bool = False) -> list[LegHit]:
    wanted = set(sources) if sources else None
    k = min(KNN_K_MAX, limit * (OVERSAMPLE if wanted or skip_derived else 1))
    blob = q.astype(np.float32).tobytes()
    while True:
        rows = conn.execute(_KNN_SQL, (blob, k)).fetchall()
        hits = [_vec_hit(r) for r in rows
                if r[6] == model and (wanted is None or r[2] in wanted)
                and not (skip_derived and r[1] is not None and is_derived(r[1]))]
        # Fewer rows than k: the table is exhausted, nothing more to find.
        if len(hits) >= limit or len(rows) < k:
            return hits[:limit]
        if k >= KNN_K_MAX:
            # Too few rows of this model/source among the 4096 nearest: scan exactly instead.
            raise OperationalError("knn limit reached")
        k = min(KNN_K_MAX, k * OVERSAMPLE)


def _vec_hit(row: tuple) -> LegHit:
    cid, path, source, start, end, text, _model, distance = row
    cosine = 1.0 - float(distance)
    return LegHit(id=cid, path=path, source=source, start_line=int(start), end_line=int(end),
                  text=text, score=cosine, raw=cosine)


# -- numpy fallback ------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Matrix:
    marker: tuple
    ids: list[str]
    vectors: np.ndarray  # (n, dims) float32, rows L2-normalised


class MatrixCache:
    """Parsed embedding matrices keyed by (database file, model, sources), a few at a time.

    An entry is reused while a cheap change marker of the database (row counts, max rowid,
    the files table's mtimes and sizes) is unchanged, so a re-index invalidates it.
    """

    def __init__(self, max_entries: int = 4) -> None:
        self._entries: OrderedDict[tuple, _Matrix] = OrderedDict()
        self._max = max_entries
        self._lock = threading.Lock()

    def get(self, key: tuple, marker: tuple) -> _Matrix | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.marker != marker:
                return None
            self._entries.move_to_end(key)
            return entry

    def put(self, key: tuple, entry: _Matrix) -> None:
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


DEFAULT_CACHE = MatrixCache()


def _db_file(conn: Connection) -> str:
    for _seq, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return file or ""
    return ""


def _change_marker(conn: Connection) -> tuple:
    chunks = conn.execute("SELECT count(*), max(rowid) FROM chunks").fetchone()
    files = conn.execute("SELECT count(*), total(mtime), total(size) FROM files").fetchone()
    return (*chunks, *files)


def load_matrix(conn: Connection, model: str, sources: Sequence[str] | None,
                 dims: int, skip_derived: bool = False) -> tuple[list[str], np.ndarray]:
    sql = "SELECT id, embedding FROM chunks WHERE model = ?"
    params: list[object] = [model]
    if skip_derived:
        sql += f" AND {SQL_NOT_DERIVED}"
    if sources:
        sql += f" AND source IN ({', '.join('?' * len(sources))})"
        params.extend(sources)
    ids: list[str] = []
    rows: list[list[float]] = []
    for cid, raw in conn.execute(sql, params):
        try:
            values = json.loads(raw) if raw else []
        except (TypeError, ValueError):
            continue
        if isinstance(values, list) and len(values) == dims:
            ids.append(cid)
            rows.append(values)
    if not rows:
        return [], np.zeros((0, dims), dtype=np.float32)
    matrix = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return ids, matrix / norms


def numpy_search(conn: Connection, q: np.ndarray, *, model: str, limit: int,
                 sources: Sequence[str] | None = None,
                 cache: MatrixCache | None = None, skip_derived: bool = False) -> list[LegHit]:
    """Exact cosine search over `chunks.embedding` in process."""
    src = tuple(sorted(set(sources))) if sources else None
    db_file = _db_file(conn)
    key = (db_file, model, src, q.size, skip_derived)
    marker = _change_marker(conn)
    entry = cache.get(key, marker) if (cache is not None and db_file) else None
    if entry is None:
        ids, matrix = load_matrix(conn, model, src, q.size, skip_derived)
        entry = _Matrix(marker, ids, matrix)
        if cache is not None and db_file:
            cache.put(key, entry)
    if not entry.ids:
        return []
    sims = entry.vectors @ q.astype(np.float32)
    n = min(limit, sims.size)
    top = np.argpartition(-sims, n - 1)[:n] if n < sims.size else np.arange(sims.size)
    top = sorted(top.tolist(), key=lambda i: (-float(sims[i]), entry.ids[i]))
    chosen = [entry.ids[i] for i in top]
    details = {
        row[0]: row for row in conn.execute(
            "SELECT id, path, source, start_line, end_line, text FROM chunks "
            f"WHERE id IN ({', '.join('?' * len(chosen))})", chosen)
    }
    hits = []
    for i in top:
        row = details.get(entry.ids[i])
        if row is None:
            continue
        cosine = float(sims[i])
        hits.append(LegHit(id=row[0], path=row[1], source=row[2], start_line=int(row[3]),
                           end_line=int(row[4]), text=row[5], score=cosine, raw=cosine))
    return hits
