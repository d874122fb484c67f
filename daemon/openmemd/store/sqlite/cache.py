"""The embedding cache (`embedding_cache` table) and vector encodings.

Keyed by (provider id, model, provider key, text hash), as in OpenClaw, so an OpenClaw index's
cache stays usable. Vectors are stored as JSON array text, like OpenClaw. Callers own the
transaction: nothing here commits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from openmemd.store.sqlite.db import Connection

# SQLite's bound-parameter limit was 999 before 3.32; 400 hashes plus 3 key columns stays
# far below it (and matches OpenClaw's grouping).
LOOKUP_GROUP = 400


def vector_to_json(vec: np.ndarray) -> str:
    """Compact JSON array. 9 significant digits round-trip any float32 exactly."""
    values = np.asarray(vec, dtype=np.float32).ravel()
    if not np.all(np.isfinite(values)):
        raise ValueError("cannot store a vector with NaN or infinite values")
    return "[" + ",".join(map("{:.9g}".format, values.tolist())) + "]"


def json_to_vector(text: str) -> np.ndarray:
    """float32 vector from JSON array text (ours, or OpenClaw's full-precision numbers)."""
    values = json.loads(text, parse_int=float)  # keeps "-0" negative, like float32 did
    if not isinstance(values, list):
        raise ValueError("embedding JSON is not an array")
    return np.asarray(values, dtype=np.float32)


def vector_to_blob(vec: np.ndarray) -> bytes:
    """float32 little-endian bytes, the format sqlite-vec expects."""
    return np.asarray(vec, dtype="<f4").ravel().tobytes()


def lookup(conn: Connection, provider_id: str, model: str, provider_key: str,
           hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """Cached vectors by text hash; hashes not cached (or unreadable) are absent."""
    wanted = list(dict.fromkeys(hashes))
    found: dict[str, np.ndarray] = {}
    for start in range(0, len(wanted), LOOKUP_GROUP):
        group = wanted[start:start + LOOKUP_GROUP]
        marks = ",".join("?" * len(group))
        rows = conn.execute(
            "SELECT hash, embedding, dims FROM embedding_cache "
            f"WHERE provider = ? AND model = ? AND provider_key = ? AND hash IN ({marks})",
            (provider_id, model, provider_key, *group))
        for hash_, text, dims in rows:
            try:
                vec = json_to_vector(text)
            except ValueError:
                continue  # a damaged row is a miss: the text is simply embedded again
            if vec.ndim != 1 or vec.size == 0 or (dims is not None and vec.size != dims):
                continue
            found[hash_] = vec
    return found


def store(conn: Connection, provider_id: str, model: str, provider_key: str,
          items: Sequence[tuple[str, np.ndarray]], now_ms: int) -> None:
    """Insert or refresh (embedding, dims, updated_at) for each (hash, vector)."""
    rows = []
    for hash_, vec in items:
        flat = np.asarray(vec, dtype=np.float32).ravel()
        rows.append((provider_id, model, provider_key, hash_, vector_to_json(flat),
                     int(flat.size), int(now_ms)))
    conn.executemany(
        "INSERT INTO embedding_cache "
        "(provider, model, provider_key, hash, embedding, dims, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (provider, model, provider_key, hash) DO UPDATE SET "
        "embedding = excluded.embedding, dims = excluded.dims, updated_at = excluded.updated_at",
        rows)


def count(conn: Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0])


def prune(conn: Connection, max_entries: int) -> int:
    """Delete the least recently written rows beyond `max_entries` (0 = no cap). Returns the
    number deleted."""
    if max_entries <= 0:
        return 0
    excess = count(conn) - max_entries
    if excess <= 0:
        return 0
    cur = conn.execute(
        "DELETE FROM embedding_cache WHERE rowid IN ("
        "SELECT rowid FROM embedding_cache ORDER BY updated_at ASC, rowid ASC LIMIT ?)",
        (excess,))
    return int(cur.rowcount)
