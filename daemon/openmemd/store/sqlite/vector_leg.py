"""The vector leg on SQLite: nearest chunks by cosine, with sqlite-vec KNN or numpy in process.

With sqlite-vec, `chunks_vec` is queried with `embedding MATCH ? AND k = ?` (KNN; the table
uses the cosine metric, so similarity = 1 − distance). It is never scanned with
`vec_distance_cosine` (~190× slower on large indexes, OpenClaw #69666). Rows of other models
or of unwanted sources are filtered after the KNN step, so k is oversampled when filtering
and widened until enough rows survive. In a long-lived process (the daemon, see
`resident.enable`) the same leg is answered from a resident numpy matrix of the same vectors,
kept current by the index's change log (resident.py): same rows, same order, several times
faster (docs/benchmarks.md, "Search latency").
When sqlite-vec is unavailable, `chunks_vec` is missing, or its dimension does not match the
query, the resident matrix is filled from `chunks.embedding` (JSON) instead, in any process.

The query is a unit vector (`search/vector.py` normalises it once); results are
`store.base.MeasuredChunk`s whose `measure` is the cosine similarity.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from openmemd.store.base import CandidateFilter, MeasuredChunk
from openmemd.store.derived import is_derived
from openmemd.store.sqlite import resident, vec_storage
from openmemd.store.sqlite.db import Connection, OperationalError, VectorSupport
from openmemd.store.sqlite.schema import vec_table_dims

KNN_K_MAX = 4096  # sqlite-vec's upper bound for k
OVERSAMPLE = 8  # k = limit × this when rows may be filtered out after the KNN step


def vector_candidates(conn: Connection, vec: VectorSupport, db_file: str, q: np.ndarray, *,
                      limit: int, where: CandidateFilter) -> list[MeasuredChunk]:
    """The `limit` chunks of `where.model` most similar to the unit vector `q`, best first."""
    if where.model is None:
        raise ValueError("the vector leg needs where.model")
    if q.size == 0 or limit <= 0:
        return []
    model, sources, skip = where.model, list(where.sources or ()) or None, where.skip_derived
    if vec.available and vec_table_dims(conn) == q.size:
        if resident.enabled():
            found = _resident_search(conn, db_file, q, from_vec_table=True, model=model,
                                     limit=limit, sources=sources, skip_derived=skip)
            if found is not None:
                return found
        try:
            return _knn_search(conn, q, model=model, limit=limit, sources=sources,
                               skip_derived=skip)
        except OperationalError:
            pass  # e.g. a damaged vec0 table: the JSON copy in `chunks` still works
    # In process: the resident matrix read from the JSON copy once, then kept by deltas (read
    # for this question alone in a file without the change log, see `resident.nearest`).
    return _resident_search(conn, db_file, q, from_vec_table=False, model=model, limit=limit,
                            sources=sources, skip_derived=skip) or []


def cosines(conn: Connection, vec: VectorSupport, db_file: str, q: np.ndarray,
            ids: Sequence[str], *, model: str) -> dict[str, float]:
    """Cosine similarity of the unit vector `q` to specific chunks (those the KNN step did not
    return). Point lookups by id (vec0 primary key, or the `chunks.embedding` JSON), never a
    scan."""
    if q.size == 0 or not ids:
        return {}
    if vec.available and resident.enabled() and vec_table_dims(conn) == q.size:
        found = resident.cosines(conn, db_file, q, ids, model=model, from_vec_table=True)
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
        out.update(_json_cosines(conn, q, missing))
    return out


def _json_cosines(conn: Connection, q: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
    """Cosine of `q` to these chunks' `chunks.embedding` JSON, by id; ids without a vector of
    q's size are absent."""
    out: dict[str, float] = {}
    for cid, raw in conn.execute(
            f"SELECT id, embedding FROM chunks WHERE id IN ({', '.join('?' * len(ids))})",
            list(ids)):
        v = vec_storage.from_json(raw, q.size)
        if v is not None:
            out[cid] = _cosine(v, q)
    return out


def _cosine(v: np.ndarray, q: np.ndarray) -> float:
    """Cosine of a stored vector to the unit vector `q`."""
    norm = float(np.linalg.norm(v))
    return float(v @ q) / norm if norm > 0 else 0.0


def _resident_search(conn: Connection, db_file: str, q: np.ndarray, *, from_vec_table: bool,
                     model: str, limit: int, sources: Sequence[str] | None,
                     skip_derived: bool) -> list[MeasuredChunk] | None:
    found_rows: list[MeasuredChunk] = []
    for _attempt in range(3):
        # A few spare rows: a chunk deleted since the matrix was refreshed is skipped below;
        # when more than that went, the next attempt refreshes (and sees the delete).
        want = limit + 8
        found = resident.nearest(conn, db_file, q, from_vec_table=from_vec_table,
                                 model=model, limit=want, sources=sources,
                                 skip_derived=skip_derived)
        if found is None:
            return None
        found_rows = _by_rowid(conn, found)
        if len(found_rows) >= limit or len(found) < want:
            break
    return found_rows[:limit]


def _by_rowid(conn: Connection, found: list[tuple[str, int, float]]) -> list[MeasuredChunk]:
    if not found:
        return []
    # One point lookup per row: with statistics from when the index was small, SQLite plans
    # `rowid IN (...)` (or a join on rowid) over 100k chunks as a full scan; `rowid = ?` is
    # always a b-tree search.
    details = {}
    for _cid, rowid, _sim in found:
        row = conn.execute("SELECT rowid, id, path, source, start_line, end_line, text "
                           "FROM chunks WHERE rowid = ?", (rowid,)).fetchone()
        if row is not None:
            details[rowid] = row
    out = []
    for cid, rowid, sim in found:
        row = details.get(rowid)
        if row is not None and row[1] == cid:  # else deleted since the matrix was refreshed
            out.append(MeasuredChunk(id=cid, path=row[2], source=row[3], start_line=int(row[4]),
                                     end_line=int(row[5]), text=row[6], measure=sim))
    return out


# -- sqlite-vec KNN ------------------------------------------------------------------------------

_KNN_SQL = (
    "WITH knn AS MATERIALIZED ("
    "  SELECT id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?) "
    "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, c.model, knn.distance "
    "FROM knn LEFT JOIN chunks AS c ON c.id = knn.id ORDER BY knn.distance, knn.id"
)


def _knn_search(conn: Connection, q: np.ndarray, *, model: str, limit: int,
                sources: Sequence[str] | None, skip_derived: bool = False) -> list[MeasuredChunk]:
    wanted = set(sources) if sources else None
    k = min(KNN_K_MAX, limit * (OVERSAMPLE if wanted or skip_derived else 1))
    blob = q.astype(np.float32).tobytes()
    while True:
        rows = conn.execute(_KNN_SQL, (blob, k)).fetchall()
        found = [_knn_candidate(r) for r in rows
                 if r[6] == model and (wanted is None or r[2] in wanted)
                 and not (skip_derived and r[1] is not None and is_derived(r[1]))]
        # Fewer rows than k: the table is exhausted, nothing more to find.
        if len(found) >= limit or len(rows) < k:
            return found[:limit]
        if k >= KNN_K_MAX:
            # Too few rows of this model/source among the 4096 nearest: scan exactly instead.
            raise OperationalError("knn limit reached")
        k = min(KNN_K_MAX, k * OVERSAMPLE)


# id, path, source, start_line, end_line, text, model, distance (rows of another model, or of a
# vec0 row without its chunk, are filtered out before this is read)
_KnnRow = tuple[str, str, str, int, int, str, str, float]


def _knn_candidate(row: _KnnRow) -> MeasuredChunk:
    cid, path, source, start, end, text, _model, distance = row
    return MeasuredChunk(id=cid, path=path, source=source, start_line=int(start), end_line=int(end),
                         text=text, measure=1.0 - float(distance))
