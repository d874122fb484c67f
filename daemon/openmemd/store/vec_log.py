"""A change log of `chunks` rows, so an in-process vector matrix can follow the index.

Triggers on `chunks` append the rowid of every inserted, deleted or re-embedded chunk to
`openmemd_vec_log`, in the writer's own transaction: whoever writes (the daemon's writer, a CLI
sync while no daemon runs, a rebuild) is logged, and a reader that has seen the log up to `seq`
only re-reads the rows logged after it (search/resident.py). The log keeps its last `KEEP`
entries; a reader that fell further behind reloads whole. `EPOCH_KEY` in `meta` is random per
database file, so a file swapped under a reader (a rebuild) is told apart from the one it read.
"""

from __future__ import annotations

import secrets
from typing import NamedTuple

from openmemd.store.db import Connection, OperationalError

LOG_TABLE = "openmemd_vec_log"
EPOCH_KEY = "openmemd_vec_log_epoch"
KEEP = 65536  # entries kept: more than any one sync writes between two searches in practice

_DDL = (
    f"CREATE TABLE IF NOT EXISTS {LOG_TABLE} ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, chunk_rowid INTEGER NOT NULL)",
    f"CREATE TRIGGER IF NOT EXISTS {LOG_TABLE}_ins AFTER INSERT ON chunks BEGIN"
    f" INSERT INTO {LOG_TABLE}(chunk_rowid) VALUES (NEW.rowid); END",
    f"CREATE TRIGGER IF NOT EXISTS {LOG_TABLE}_del AFTER DELETE ON chunks BEGIN"
    f" INSERT INTO {LOG_TABLE}(chunk_rowid) VALUES (OLD.rowid); END",
    f"CREATE TRIGGER IF NOT EXISTS {LOG_TABLE}_upd"
    " AFTER UPDATE OF embedding, model, source, path ON chunks BEGIN"
    f" INSERT INTO {LOG_TABLE}(chunk_rowid) VALUES (OLD.rowid);"
    f" INSERT INTO {LOG_TABLE}(chunk_rowid) VALUES (NEW.rowid); END",
    # Trimmed every 1,024 entries rather than on each insert: one range delete, rarely.
    f"CREATE TRIGGER IF NOT EXISTS {LOG_TABLE}_trim AFTER INSERT ON {LOG_TABLE}"
    f" WHEN NEW.seq % 1024 = 0 BEGIN"
    f" DELETE FROM {LOG_TABLE} WHERE seq <= NEW.seq - {KEEP}; END",
)


class LogState(NamedTuple):
    epoch: str
    first: int  # oldest seq still logged (0: empty)
    last: int  # newest seq (0: empty)


def ensure_vec_log(conn: Connection) -> None:
    """Create the log, its triggers and the file's epoch. Idempotent."""
    for statement in _DDL:
        conn.execute(statement)
    conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                 (EPOCH_KEY, secrets.token_hex(8)))


def log_state(conn: Connection) -> LogState | None:
    """Where the log stands, or None for a database without one (never opened by a writer of
    this version)."""
    try:
        row = conn.execute(
            f"SELECT (SELECT value FROM meta WHERE key = ?), (SELECT min(seq) FROM {LOG_TABLE}),"
            f" (SELECT max(seq) FROM {LOG_TABLE})", (EPOCH_KEY,)).fetchone()
    except OperationalError:
        return None
    if row is None or row[0] is None:
        return None
    return LogState(str(row[0]), int(row[1] or 0), int(row[2] or 0))


def changed_since(conn: Connection, seq: int, upto: int) -> tuple[set[int], int]:
    """Chunk rowids logged in (seq, upto], and the oldest seq logged now (after the read: if it
    is past seq + 1, entries this reader needed were trimmed)."""
    rowids = {r[0] for r in conn.execute(
        f"SELECT chunk_rowid FROM {LOG_TABLE} WHERE seq > ? AND seq <= ?", (seq, upto))}
    first = conn.execute(f"SELECT min(seq) FROM {LOG_TABLE}").fetchone()[0]
    return rowids, int(first or 0)
