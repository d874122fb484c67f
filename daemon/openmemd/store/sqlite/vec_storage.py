"""Every vector of `chunks_vec` at once, read from the vec0 table's own storage.

`SELECT id, embedding FROM chunks_vec` is slow, seconds at 100k chunks: vec0 looks each row
up in its chunk blobs. Its storage is plain SQLite tables -- `chunks_vec_rowids` (id →
chunk, offset), `chunks_vec_chunks` (a validity bitmap per chunk) and
`chunks_vec_vector_chunks00` (one blob of `size` float32 vectors per chunk) -- read here in a
few large blobs, several times faster (docs/benchmarks.md). That layout is sqlite-vec's
(0.1.x), not a published interface, so the result is checked against vec0's own answer for a
sample of ids; any difference, or a layout that does not fit, returns None and the caller
scans the table the slow way.
"""

from __future__ import annotations

import json
import random
import warnings
from collections.abc import Iterator

import numpy as np

from openmemd.store.sqlite.db import Connection, OperationalError

SAMPLE = 16  # ids compared with vec0's own lookup before the fast read is trusted


def read_vectors(conn: Connection, dims: int) -> Iterator[tuple[str, np.ndarray]] | None:
    """(id, float32 vector) of every row, or None when the storage is not the known layout."""
    try:
        placed = _placements(conn)
        if placed is None or not _sample_matches(conn, placed, dims):
            return None
    except (OperationalError, ValueError):
        return None
    return _vectors(conn, placed, dims)


def _placements(conn: Connection) -> dict[int, list[tuple[int, str]]] | None:
    """chunk_id → [(offset, id)] of the rows marked valid."""
    validity = {cid: bytes(v) for cid, v in conn.execute(
        "SELECT chunk_id, validity FROM chunks_vec_chunks")}
    placed: dict[int, list[tuple[int, str]]] = {}
    for cid, chunk_id, offset in conn.execute(
            "SELECT id, chunk_id, chunk_offset FROM chunks_vec_rowids"):
        bits = validity.get(chunk_id)
        if bits is None or offset is None or offset // 8 >= len(bits):
            return None
        if bits[offset // 8] >> (offset % 8) & 1:
            placed.setdefault(chunk_id, []).append((int(offset), str(cid)))
    return placed


def _chunk(conn: Connection, chunk_id: int, dims: int) -> np.ndarray | None:
    row = conn.execute("SELECT vectors FROM chunks_vec_vector_chunks00 WHERE rowid = ?",
                       (chunk_id,)).fetchone()
    if row is None or not isinstance(row[0], bytes) or len(row[0]) % (4 * dims):
        return None
    return np.frombuffer(row[0], dtype="<f4").reshape(-1, dims)


def _sample_matches(conn: Connection, placed: dict[int, list[tuple[int, str]]],
                    dims: int) -> bool:
    flat = [(chunk_id, offset, cid) for chunk_id, rows in placed.items()
            for offset, cid in rows]
    for chunk_id, offset, cid in random.sample(flat, min(SAMPLE, len(flat))):
        matrix = _chunk(conn, chunk_id, dims)
        row = conn.execute("SELECT embedding FROM chunks_vec WHERE id = ?", (cid,)).fetchone()
        if matrix is None or offset >= matrix.shape[0] or row is None:
            return False
        if matrix[offset].tobytes() != bytes(row[0]):
            return False
    return True


def _vectors(conn: Connection, placed: dict[int, list[tuple[int, str]]],
             dims: int) -> Iterator[tuple[str, np.ndarray]]:
    # One chunk blob in memory at a time (1,024 vectors), not all of them.
    for chunk_id, rows in placed.items():
        matrix = _chunk(conn, chunk_id, dims)
        if matrix is None:
            continue
        for offset, cid in rows:
            if offset < matrix.shape[0]:
                yield cid, matrix[offset]


def from_blob(blob: object, dims: int) -> np.ndarray | None:
    if not isinstance(blob, bytes | bytearray | memoryview) or len(blob) != 4 * dims:
        return None
    v = np.frombuffer(blob, dtype="<f4")
    return v if np.all(np.isfinite(v)) else None


def from_json(raw: object, dims: int) -> np.ndarray | None:
    """A `chunks.embedding` JSON array as float32, or None (empty, malformed, other size)."""
    if not isinstance(raw, str) or len(raw) < 3:
        return None
    with warnings.catch_warnings():  # numpy's C parser: ~10× faster than json.loads
        warnings.simplefilter("ignore")
        try:
            v = np.fromstring(raw.strip()[1:-1], dtype=np.float32, sep=",")
        except ValueError:
            v = np.zeros(0, dtype=np.float32)
    if v.size != dims:  # stopped early on something it does not read: ask json
        try:
            v = np.asarray(json.loads(raw), dtype=np.float32)
        except (TypeError, ValueError):
            return None
    if v.ndim != 1 or v.size != dims or not np.all(np.isfinite(v)):
        return None
    return v
