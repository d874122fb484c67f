"""The vector leg from a resident matrix: exact cosine KNN with numpy, kept current by deltas.

sqlite-vec 0.1.9's KNN is a brute-force scan several times slower than numpy's BLAS on the same
vectors (docs/benchmarks.md). A long-lived process (the daemon) keeps, per index file, every
chunk vector in one float32 matrix (rows L2-normalised) with each row's chunk rowid, id, model,
source and whether its path is derived (the KNN leg's filters): `M @ q` + argpartition.

Kept current without reloading: the index logs the rowid of each chunk written, deleted or
re-embedded (vec_log.py, appended in the writer's transaction, whatever process writes).
Before each search the matrix reads the log past the last seq it applied and re-reads only those
rows; a changed file epoch (a rebuilt file), a trimmed log or a delta larger than a quarter of
the matrix reloads it whole (`full_loads` counts those). A row is read in its current state, so
applying a change twice is harmless and the log needs no snapshot isolation.

Threads: searches hold a shared lock over the product; a delta, which may overwrite a dead row
in place or grow the array, holds it exclusively (a few rows, rare); a whole reload builds new
arrays outside the lock and swaps them in. No search sees a half-written row.

Vectors come from `chunks_vec` (the same float32 values the KNN leg compares) or, without
sqlite-vec, from `chunks.embedding` JSON. Memory: 4 B × dims per chunk (154 MB for 100k chunks of
384 dims) plus a little headroom; freed rows are reused. The load keeps one string per distinct
model, source and path (SQLite's new one per row fragmented the heap for good).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from openmemd.log import get_logger
from openmemd.store.derived import is_derived
from openmemd.store.sqlite import db, heap, schema, vec_log, vec_storage
from openmemd.store.sqlite.db import Connection, OperationalError
from openmemd.store.sqlite.rwlock import RWLock

log = get_logger(__name__)

_enabled = False  # see enable()


def enable(on: bool = True) -> None:
    """Serve the vector leg from resident matrices in this process (the daemon turns it on). A
    one-shot CLI search leaves it off: one sqlite-vec scan is cheaper than loading 100k rows."""
    global _enabled
    _enabled = on


def enabled() -> bool:
    return _enabled


@dataclass(frozen=True)
class _Row:
    rowid: int
    id: str
    model: str
    source: str
    path: str
    vector: np.ndarray | None  # None: no vector (pending, or of another dimension)


class _Arrays:
    """Parallel per-row arrays of one matrix; rows past `n` are unused capacity."""

    def __init__(self, dims: int, capacity: int) -> None:
        self.dims = dims
        self.vectors = np.empty((capacity, dims), dtype=np.float32)
        self.alive = np.zeros(capacity, dtype=bool)
        self.model = np.zeros(capacity, dtype=np.int32)
        self.source = np.zeros(capacity, dtype=np.int32)
        self.derived = np.zeros(capacity, dtype=bool)
        self.ids: list[str] = []
        self.rowids: list[int] = []
        self.n = 0

    @property
    def capacity(self) -> int:
        return int(self.vectors.shape[0])

    def grown(self, capacity: int) -> _Arrays:
        out = _Arrays(self.dims, capacity)
        n = self.n
        for name in ("vectors", "alive", "model", "source", "derived"):
            getattr(out, name)[:n] = getattr(self, name)[:n]
        out.ids, out.rowids, out.n = self.ids, self.rowids, n
        return out


class ResidentMatrix:
    """The vectors of one index file (see the module docstring)."""

    def __init__(self, from_vec_table: bool) -> None:
        self.from_vec_table = from_vec_table
        self.full_loads = 0
        self.deltas = 0
        self._rw = RWLock()
        self._update = threading.Lock()  # one thread refreshes; the others wait for it
        self._epoch: str | None = None
        self._seq = 0
        self._chunks_max = 0
        self._arrays: _Arrays | None = None
        self._row_of: dict[int, int] = {}  # chunk rowid -> row
        self._row_by_id: dict[str, int] = {}  # chunk id -> row
        self._free: list[int] = []
        self._codes: dict[tuple[str, str], int] = {}  # ("model"|"source", name) -> code

    # -- keeping current ---------------------------------------------------------------------
    def refresh(self, conn: Connection, dims: int) -> bool:
        """Apply what the index logged since the last refresh; False: no log, use another leg."""
        with self._update:  # the state read under it too: no thread acts on an older one
            state = vec_log.log_state(conn)
            if state is None:
                return False
            a = self._arrays
            if (state.epoch != self._epoch or a is None or a.dims != dims
                    or (state.first > self._seq + 1 and state.last > self._seq)):
                self._load(conn, dims, state)
                return True
            if state.last <= self._seq:
                if state.last == self._seq and state.chunks_max != self._chunks_max:
                    # rows inserted by a writer that does not log
                    self._load(conn, dims, state)
                return True
            rowids, first = vec_log.changed_since(conn, self._seq, state.last)
            live = a.n - len(self._free)
            if first > self._seq + 1 or len(rowids) > max(1024, live // 4):
                self._load(conn, dims, state)
                return True
            self._apply(self._read_rows(conn, sorted(rowids), dims), set(rowids))
            self._seq, self._chunks_max = state.last, state.chunks_max
            self.deltas += 1
        return True

    def _load(self, conn: Connection, dims: int, state: vec_log.LogState) -> None:
        # The log position is read before the rows: a change committed in between is in the
        # rows and logged after `seq` too, and applying it again changes nothing.
        count = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        arrays = _Arrays(dims, count + max(1024, count // 8))
        codes: dict[tuple[str, str], int] = {}
        row_of: dict[int, int] = {}
        models: list[int] = []
        sources: list[int] = []
        derived: list[bool] = []
        for row in self._all_rows(conn, dims):
            if arrays.n == arrays.capacity:  # rows written since the count
                arrays = arrays.grown(arrays.capacity + max(1024, arrays.capacity // 4))
            i = arrays.n
            arrays.vectors[i] = row.vector  # normalised below, all at once
            models.append(codes.setdefault(("model", row.model), len(codes) + 1))
            sources.append(codes.setdefault(("source", row.source), len(codes) + 1))
            derived.append(is_derived(row.path))
            arrays.ids.append(row.id)
            arrays.rowids.append(row.rowid)
            row_of[row.rowid] = i
            arrays.n += 1
        n = arrays.n
        arrays.model[:n], arrays.source[:n] = models, sources
        arrays.derived[:n], arrays.alive[:n] = derived, True
        for start in range(0, n, 8192):  # blocks: no second full-size temporary
            block = arrays.vectors[start:min(n, start + 8192)]
            norms = np.linalg.norm(block, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            block /= norms
        row_by_id = {cid: i for i, cid in enumerate(arrays.ids)}
        self._rw.acquire_write()
        try:
            self._arrays, self._codes, self._row_of, self._free = arrays, codes, row_of, []
            self._row_by_id = row_by_id
            self._epoch, self._seq, self._chunks_max = state.epoch, state.last, state.chunks_max
        finally:
            self._rw.release_write()
        self.full_loads += 1
        del models, sources, derived, row_of, row_by_id, arrays
        log.info("resident_vectors_loaded", rows=self._arrays.n, dims=dims,
                 from_vec_table=self.from_vec_table, heap_trimmed=heap.release_free_memory())

    def _apply(self, rows: list[_Row], rowids: set[int]) -> None:
        self._rw.acquire_write()
        try:
            a = self._arrays
            assert a is not None
            for rowid in rowids:
                i = self._row_of.pop(rowid, None)
                if i is not None:
                    if self._row_by_id.get(a.ids[i]) == i:
                        del self._row_by_id[a.ids[i]]
                    a.alive[i] = False
                    self._free.append(i)
            for row in rows:
                if row.vector is None:
                    continue
                if self._free:
                    i = self._free.pop()
                else:
                    if a.n == a.capacity:
                        a = self._arrays = a.grown(a.capacity + max(1024, a.capacity // 4))
                    i = a.n
                    a.ids.append("")
                    a.rowids.append(0)
                    a.n += 1
                self._put(a, i, row, self._codes)
                self._row_of[row.rowid] = i
                self._row_by_id[row.id] = i
        finally:
            self._rw.release_write()

    @staticmethod
    def _put(a: _Arrays, i: int, row: _Row, codes: dict[tuple[str, str], int]) -> None:
        v = row.vector
        assert v is not None
        norm = float(np.linalg.norm(v))
        a.vectors[i] = v / norm if norm > 0 else v
        a.model[i] = codes.setdefault(("model", row.model), len(codes) + 1)
        a.source[i] = codes.setdefault(("source", row.source), len(codes) + 1)
        a.derived[i] = is_derived(row.path)
        if i < len(a.ids):
            a.ids[i], a.rowids[i] = row.id, row.rowid
        else:
            a.ids.append(row.id)
            a.rowids.append(row.rowid)
        a.alive[i] = True

    # -- reading the index -------------------------------------------------------------------
    def _all_rows(self, conn: Connection, dims: int) -> Iterable[_Row]:
        if not self.from_vec_table:
            for rowid, cid, model, source, path, raw in conn.execute(
                    "SELECT rowid, id, model, source, path, embedding FROM chunks"):
                v = vec_storage.from_json(raw, dims)
                if v is not None:
                    yield _Row(rowid, cid, model, source, path, v)
            return
        same: dict[str, str] = {}  # one string per distinct value (module docstring, Memory)
        by_id = {r[1]: (*r[:2], *(same.setdefault(s, s) for s in r[2:])) for r in conn.execute(
            "SELECT rowid, id, model, source, path FROM chunks")}
        stored: Iterable[tuple[str, np.ndarray | None]] | None = vec_storage.read_vectors(
            conn, dims)
        if stored is None:  # not the storage layout we know: ask the vec0 table, 7× slower
            stored = ((cid, vec_storage.from_blob(blob, dims)) for cid, blob in conn.execute(
                "SELECT id, embedding FROM chunks_vec"))
        for cid, v in stored:
            r = by_id.get(cid)
            if r is not None and v is not None:
                yield _Row(r[0], r[1], r[2], r[3], r[4], v)

    def _read_rows(self, conn: Connection, rowids: Sequence[int], dims: int) -> list[_Row]:
        out: list[_Row] = []
        for start in range(0, len(rowids), 500):
            part = rowids[start:start + 500]
            marks = ", ".join("?" * len(part))
            for rowid, cid, model, source, path, raw in conn.execute(
                    "SELECT rowid, id, model, source, path, embedding FROM chunks "
                    f"WHERE rowid IN ({marks})", part):
                if self.from_vec_table:
                    blob = conn.execute("SELECT embedding FROM chunks_vec WHERE id = ?",
                                        (cid,)).fetchone()
                    v = vec_storage.from_blob(blob[0], dims) if blob is not None else None
                else:
                    v = vec_storage.from_json(raw, dims)
                out.append(_Row(rowid, cid, model, source, path, v))
        return out

    # -- searching ---------------------------------------------------------------------------
    def nearest(self, q: np.ndarray, *, model: str, limit: int, sources: Sequence[str] | None,
                skip_derived: bool) -> list[tuple[str, int, float]]:
        """(chunk id, rowid, cosine) of the `limit` nearest rows that pass the filters, best first;
        ties by id, like the KNN leg's ORDER BY distance, id."""
        self._rw.acquire_read()
        try:
            a = self._arrays
            if a is None or a.n == 0 or limit <= 0:
                return []
            n = a.n
            code = self._codes.get(("model", model))
            if code is None:
                return []
            mask = a.alive[:n] & (a.model[:n] == code)
            if sources:
                wanted = [self._codes[k] for k in (("source", s) for s in sources)
                          if k in self._codes]
                mask &= np.isin(a.source[:n], wanted)
            if skip_derived:
                mask &= ~a.derived[:n]
            count = int(np.count_nonzero(mask))
            if count == 0:
                return []
            sims = a.vectors[:n] @ q
            if count < n:
                sims[~mask] = -np.inf
            k = min(limit, count)
            part = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
            # Rows tied with the k-th score stay candidates, so ties break by id.
            part = np.flatnonzero(sims >= sims[part].min())
            ids = a.ids
            found = [(ids[int(i)], a.rowids[int(i)], float(sims[i])) for i in part]
        finally:
            self._rw.release_read()
        found.sort(key=lambda t: (-t[2], t[0]))
        return found[:limit]

    def cosines(self, q: np.ndarray, ids: Sequence[str], model: str) -> dict[str, float]:
        """Cosine of the query to these chunks of `model`, those the matrix holds."""
        self._rw.acquire_read()
        try:
            a = self._arrays
            code = self._codes.get(("model", model))
            if a is None or code is None:
                return {}
            rows = {cid: self._row_by_id.get(cid) for cid in ids}
            return {cid: float(a.vectors[i] @ q) for cid, i in rows.items()
                    if i is not None and a.alive[i] and a.model[i] == code}
        finally:
            self._rw.release_read()


# -- one matrix per index file, per process ---------------------------------------------------

_matrices: dict[tuple[str, bool], ResidentMatrix] = {}
_matrices_lock = threading.Lock()


def matrix_for(db_file: str, from_vec_table: bool) -> ResidentMatrix:
    key = (os.path.realpath(db_file), from_vec_table)
    with _matrices_lock:
        m = _matrices.get(key)
        if m is None:
            m = _matrices[key] = ResidentMatrix(from_vec_table)
        return m


def forget(db_file: str | None = None) -> None:
    """Drop the matrices of one file (or all): their memory goes with them."""
    with _matrices_lock:
        for key in [k for k in _matrices if db_file is None
                    or k[0] == os.path.realpath(db_file)]:
            del _matrices[key]


def nearest(conn: Connection, db_file: str, q: np.ndarray, *, from_vec_table: bool, model: str,
            limit: int, sources: Sequence[str] | None, skip_derived: bool
            ) -> list[tuple[str, int, float]] | None:
    """The resident matrix's answer for this index, or None when it cannot give one (no
    change log in this file, an unreadable row set). From the JSON copy it always answers: a
    file without the change log (no writer of this version opened it yet) is read whole for
    this question alone."""
    m = _current(conn, db_file, q, from_vec_table)
    if m is None and not from_vec_table:
        m = ResidentMatrix(from_vec_table=False)  # not kept: nothing would keep it current
        m._load(conn, q.size, vec_log.LogState(epoch="", first=0, last=0, chunks_max=0))
    if m is None:
        return None
    return m.nearest(q, model=model, limit=limit, sources=sources, skip_derived=skip_derived)


def cosines(conn: Connection, db_file: str, q: np.ndarray, ids: Sequence[str], *,
            model: str, from_vec_table: bool) -> dict[str, float] | None:
    """The resident matrix's cosines for these chunks, or None when it cannot give them."""
    m = _current(conn, db_file, q, from_vec_table)
    return None if m is None else m.cosines(q, ids, model)


def _current(conn: Connection, db_file: str, q: np.ndarray, from_vec_table: bool
             ) -> ResidentMatrix | None:
    """This index's matrix with every logged change applied, or None when it cannot be."""
    if not db_file:
        return None
    m = matrix_for(db_file, from_vec_table)
    try:
        return m if m.refresh(conn, q.size) else None
    except OperationalError:
        return None


def warm_in_background(db_files: Iterable[object]) -> None:
    """Load the matrices of these index files in background threads, so the daemon's first
    search does not pay the load (about a second per 100k chunks). Only when enabled."""
    if not _enabled:
        return
    for db_file in db_files:
        threading.Thread(target=_warm, args=(str(db_file),), name="resident-vectors-warm",
                         daemon=True).start()


def _warm(db_file: str) -> None:
    try:
        conn, vec = db.connect(db_file, readonly=True)
    except db.DatabaseError as exc:  # no index yet, or being replaced: the first search loads
        log.info("resident_vectors_warm_skipped", db=db_file, reason=str(exc))
        return
    try:
        dims = schema.vec_table_dims(conn) if vec.available else None
        if dims is not None:
            matrix_for(db_file, True).refresh(conn, dims)
    except db.DatabaseError as exc:
        log.info("resident_vectors_warm_skipped", db=db_file, reason=str(exc))
    finally:
        conn.close()
