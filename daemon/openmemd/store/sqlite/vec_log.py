"""A change log of `chunks` rows, so an in-process vector matrix can follow the index.

The writer's SQL (queries.py) appends the rowid of every chunk it inserts, deletes or
re-embeds to `openmemd_vec_log`, in its own transaction: whoever writes (the daemon's writer, a
CLI sync while no daemon runs) is logged, and a reader that has seen the log up to `seq` only
re-reads the rows logged after it (resident.py). The log keeps its last `KEEP` entries;
a reader that fell further behind reloads whole. `EPOCH_KEY` in `meta` is random per database
file, so a file swapped under a reader (a rebuild) is told apart from the one it read. Rows
inserted by a writer that does not log (an older openmemd, a script) still move
`max(rowid)` of `chunks`, which a reader compares too.

Appends, not triggers: the schema lives in page 1 of the file, and what fits there is what a
truncated index still shows to the salvage of its embedding cache (recovery.py).
"""

from __future__ import annotations

import secrets
from typing import NamedTuple

from openmemd.store.sqlite.db import Connection, OperationalError

LOG_TABLE = "openmemd_vec_log"
EPOCH_KEY = "openmemd_vec_log_epoch"
KEEP = 65536  # entries kept: more than any one sync writes between two searches in practice

# No AUTOINCREMENT (it adds `sqlite_sequence` to the schema): seq is max + 1, and the newest
# entry is never trimmed, so seq only grows.
_DDL = f"CREATE TABLE IF NOT EXISTS {LOG_TABLE}(seq INTEGER PRIMARY KEY, r INTEGER NOT NULL)"


class LogState(NamedTuple):
    epoch: str
    first: int  # oldest seq still logged (0: empty)
    last: int  # newest seq (0: empty)
    chunks_max: int  # max(rowid) of chunks: an insert by a writer that does not log moves it


def ensure_vec_log(conn: Connection) -> None:
    """Create the log and the file's epoch. Idempotent."""
    conn.execute(_DDL)
    conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                 (EPOCH_KEY, secrets.token_hex(8)))


def log_state(conn: Connection) -> LogState | None:
    """Where the log stands, or None for a database without one (never opened by a writer of
    this version)."""
    try:
        row = conn.execute(
            f"SELECT (SELECT value FROM meta WHERE key = ?), (SELECT min(seq) FROM {LOG_TABLE}),"
            f" (SELECT max(seq) FROM {LOG_TABLE}), (SELECT max(rowid) FROM chunks)",
            (EPOCH_KEY,)).fetchone()
    except OperationalError:
        return None
    if row is None or row[0] is None:
        return None
    return LogState(str(row[0]), int(row[1] or 0), int(row[2] or 0), int(row[3] or 0))


def changed_since(conn: Connection, seq: int, upto: int) -> tuple[set[int], int]:
    """Chunk rowids logged in (seq, upto], and the oldest seq logged now (after the read: if it
    is past seq + 1, entries this reader needed were trimmed)."""
    rowids = {r[0] for r in conn.execute(
        f"SELECT r FROM {LOG_TABLE} WHERE seq > ? AND seq <= ?", (seq, upto))}
    first = conn.execute(f"SELECT min(seq) FROM {LOG_TABLE}").fetchone()[0]
    return rowids, int(first or 0)


def note_rowids(conn: Connection, rowids: list[int]) -> None:
    """In the writer's transaction: these chunk rows changed."""
    conn.executemany(f"INSERT INTO {LOG_TABLE}(r) VALUES (?)", [(r,) for r in rowids])
    _trim(conn)


def note_where(conn: Connection, where: str, param: object) -> None:
    """In the writer's transaction, before the change: the chunk rows `where` selects."""
    conn.execute(f"INSERT INTO {LOG_TABLE}(r) SELECT rowid FROM chunks WHERE {where}", (param,))
    _trim(conn)


def _trim(conn: Connection) -> None:
    conn.execute(f"DELETE FROM {LOG_TABLE} WHERE seq <= (SELECT max(seq) FROM {LOG_TABLE}) - ?",
                 (KEEP,))
