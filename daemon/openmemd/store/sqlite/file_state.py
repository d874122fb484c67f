"""openmemd's own per-file bookkeeping, in two tables beside OpenClaw's six.

OpenClaw's `files` table keeps its columns (path, source, hash, mtime, size), so the extra
facts live here:
- `openmemd_file_signals`: the ctime and inode each indexed file had when it was indexed.
  mtime and size can be put back by an editor or `touch -r`; ctime and inode cannot, so a
  file whose signals differ is hashed again. Stored (not only kept in memory) so a new
  process — the CLI, a restarted daemon — sees an edit made while nothing was running.
- `openmemd_skipped`: files that could not be indexed, with the signature they had and why,
  so an unchanged bad file is reported on every sync but read and logged only once. Keyed by
  the file name's raw bytes (a name need not be UTF-8); `path` is its printable form.
A row missing from either table only costs one re-read of that file.
"""

from __future__ import annotations

from openmemd.store.base import FileSignature, Skipped
from openmemd.store.sqlite.db import Connection

# The row types are the interface's own (`store.base`), re-exported for this module's callers.
__all__ = ["FileSignature", "Skipped", "delete_signals", "delete_skipped", "ensure_tables",
           "load_signatures", "load_skipped", "set_signals", "set_skipped"]

_DDL = {
    "openmemd_file_signals": """CREATE TABLE IF NOT EXISTS openmemd_file_signals (
  path TEXT PRIMARY KEY,
  ctime_ns INTEGER NOT NULL,
  ino INTEGER NOT NULL
)""",
    "openmemd_skipped": """CREATE TABLE IF NOT EXISTS openmemd_skipped (
  name BLOB PRIMARY KEY,
  path TEXT NOT NULL,
  source TEXT NOT NULL,
  mtime INTEGER NOT NULL,
  size INTEGER NOT NULL,
  ctime_ns INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  reason TEXT NOT NULL
)""",
}


def ensure_tables(conn: Connection) -> None:
    have = {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE name IN (?, ?)", tuple(_DDL))}
    for name, ddl in _DDL.items():
        if name not in have:
            conn.execute(ddl)


def load_signatures(conn: Connection) -> dict[str, FileSignature]:
    """Every `files` row with its signals (-1 where none were stored)."""
    return {r[0]: FileSignature(*r) for r in conn.execute(
        "SELECT f.path, f.source, f.mtime, f.size, coalesce(s.ctime_ns, -1), "
        "coalesce(s.ino, -1) FROM files f LEFT JOIN openmemd_file_signals s ON s.path = f.path")}


def set_signals(conn: Connection, path: str, ctime_ns: int, ino: int) -> None:
    conn.execute("INSERT OR REPLACE INTO openmemd_file_signals(path, ctime_ns, ino) "
                 "VALUES (?, ?, ?)", (path, ctime_ns, ino))


def delete_signals(conn: Connection, path: str) -> None:
    conn.execute("DELETE FROM openmemd_file_signals WHERE path = ?", (path,))


def load_skipped(conn: Connection) -> dict[bytes, Skipped]:
    return {r[0]: Skipped(tuple(r[2:7]), r[1], r[7]) for r in conn.execute(
        "SELECT name, path, source, mtime, size, ctime_ns, ino, reason FROM openmemd_skipped")}


def set_skipped(conn: Connection, name: bytes, skipped: Skipped) -> None:
    conn.execute("INSERT OR REPLACE INTO openmemd_skipped(name, path, source, mtime, size, "
                 "ctime_ns, ino, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (name, skipped.path, *skipped.signature, skipped.reason))


def delete_skipped(conn: Connection, name: bytes) -> None:
    conn.execute("DELETE FROM openmemd_skipped WHERE name = ?", (name,))
