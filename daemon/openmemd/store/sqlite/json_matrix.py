"""The vector leg without sqlite-vec and without the change log: numpy over `chunks.embedding`.

The JSON copy of every vector is parsed into one matrix per (database file, model, sources),
kept in a small cache until a cheap change marker of the database moves, then searched exactly
(`M @ q` + argpartition). Also the JSON point lookups of `vector_leg.cosines`.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from openmemd.store.base import Candidate
from openmemd.store.sqlite.db import Connection
from openmemd.store.sqlite.schema import SQL_NOT_DERIVED

Marker = tuple[Any, ...]  # what _change_marker reads
Key = tuple[Any, ...]  # (database file, model, sources, dims, skip_derived)


@dataclass(frozen=True)
class _Matrix:
    marker: Marker
    ids: list[str]
    vectors: np.ndarray  # (n, dims) float32, rows L2-normalised


class MatrixCache:
    """Parsed embedding matrices keyed by (database file, model, sources), a few at a time.

    An entry is reused while a cheap change marker of the database (row counts, max rowid,
    the files table's mtimes and sizes) is unchanged, so a re-index invalidates it.
    """

    def __init__(self, max_entries: int = 4) -> None:
        self._entries: OrderedDict[Key, _Matrix] = OrderedDict()
        self._max = max_entries
        self._lock = threading.Lock()

    def get(self, key: Key, marker: Marker) -> _Matrix | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.marker != marker:
                return None
            self._entries.move_to_end(key)
            return entry

    def put(self, key: Key, entry: _Matrix) -> None:
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


DEFAULT_CACHE = MatrixCache()


def _change_marker(conn: Connection) -> Marker:
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


def numpy_search(conn: Connection, db_file: str, q: np.ndarray, *, model: str, limit: int,
                 sources: Sequence[str] | None = None, cache: MatrixCache | None = None,
                 skip_derived: bool = False) -> list[Candidate]:
    """Exact cosine search over `chunks.embedding` in process (`q` a unit vector)."""
    src = tuple(sorted(set(sources))) if sources else None
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
    part = np.argpartition(-sims, n - 1)[:n] if n < sims.size else np.arange(sims.size)
    top = sorted(part.tolist(), key=lambda i: (-float(sims[i]), entry.ids[i]))
    chosen = [entry.ids[i] for i in top]
    details = {
        row[0]: row for row in conn.execute(
            "SELECT id, path, source, start_line, end_line, text FROM chunks "
            f"WHERE id IN ({', '.join('?' * len(chosen))})", chosen)
    }
    out = []
    for i in top:
        row = details.get(entry.ids[i])
        if row is None:
            continue
        out.append(Candidate(id=row[0], path=row[1], source=row[2], start_line=int(row[3]),
                             end_line=int(row[4]), text=row[5], measure=float(sims[i])))
    return out


def cosine(v: np.ndarray, q: np.ndarray) -> float:
    """Cosine of a stored vector to the unit vector `q`."""
    norm = float(np.linalg.norm(v))
    return float(v @ q) / norm if norm > 0 else 0.0


def json_cosines(conn: Connection, q: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
    """Cosine of `q` to these chunks' JSON vectors, by id; ids without a vector of q's size
    are absent."""
    out: dict[str, float] = {}
    for cid, raw in conn.execute(
            f"SELECT id, embedding FROM chunks WHERE id IN ({', '.join('?' * len(ids))})",
            list(ids)):
        try:
            v = np.asarray(json.loads(raw), dtype=np.float32) if raw else None
        except (TypeError, ValueError):
            continue
        if v is not None and v.size == q.size:
            out[cid] = cosine(v, q)
    return out
