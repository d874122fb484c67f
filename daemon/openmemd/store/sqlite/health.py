"""Telling a damaged or full index from other failures, and the file work of healing it.

The index is only a cache of the Markdown, so damage is never fatal: the bad files are moved
aside (`<db>.corrupt-<time>`, the newest few kept for a post-mortem), the embeddings that can
still be read are salvaged row by row, and the index is rebuilt. A full disk is not damage:
the writes are retried once space returns.
"""

from __future__ import annotations

import errno
import glob
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from openmemd.log import get_logger
from openmemd.store.base import DiskFullError, IndexDamagedError
from openmemd.store.sqlite import db

log = get_logger(__name__)

# Every file SQLite may keep beside a database.
SIDECARS = ("", "-wal", "-shm", "-journal")
KEEP_CORRUPT = 2
# A salvage gives up after this many unreadable stretches: it must never hold up a rebuild.
MAX_SALVAGE_ERRORS = 200

_DAMAGE_MARKERS = ("malformed", "not a database", "no such table", "file is encrypted",
                   "unable to open database file", "database corrupt",
                   "vtable constructor failed")
_FULL_MARKERS = ("database or disk is full", "no space left")


def is_disk_full(exc: BaseException, path: Path | None = None) -> bool:
    """SQLITE_FULL, ENOSPC/EDQUOT, or (SQLite reports some failed writes on a full disk as
    a plain I/O error) an I/O error while `path`'s filesystem has no space left."""
    if isinstance(exc, DiskFullError):
        return True
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if not isinstance(exc, db.DatabaseError):
        return False
    message = str(exc).lower()
    if any(m in message for m in _FULL_MARKERS):
        return True
    return "disk i/o error" in message and path is not None and _no_space(path)


def _no_space(path: Path) -> bool:
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


def is_damage(exc: BaseException) -> bool:
    """A database error that means the file itself is gone or broken (not busy, not full).

    Callers rule out a full disk first (`is_disk_full` with the path): after that, a plain
    "disk I/O error" is a short read past the end of a truncated file (sqlite-vec's reads of
    a cut vector table report it so), and rebuilding the derived index is the remedy.
    """
    if isinstance(exc, IndexDamagedError):
        return True
    if not isinstance(exc, db.DatabaseError) or is_disk_full(exc):
        return False
    message = str(exc).lower()
    return any(m in message for m in _DAMAGE_MARKERS) or "disk i/o error" in message


def disk_full(path: Path, exc: BaseException) -> DiskFullError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return DiskFullError(f"disk full writing {path}: {reason}; writes are retried when space "
                         "returns")


@dataclass(frozen=True)
class FileIdentity:
    """Which file a connection opened, to notice it being deleted or replaced under us."""

    device: int
    inode: int

    @classmethod
    def of(cls, path: Path) -> FileIdentity | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return cls(st.st_dev, st.st_ino)


def replaced_reason(path: Path, opened: FileIdentity | None) -> str:
    """Why the file at `path` is no longer the one opened ('' when it still is)."""
    if opened is None:
        return ""
    now = FileIdentity.of(path)
    if now is None:
        return "index file deleted"
    if now != opened:
        return "index file replaced"
    return ""


def quick_check(conn: db.Connection, path: Path, *, thorough: bool = True) -> str:
    """'' when the database at `path` looks sound, else what is wrong; a full disk raises
    (a fresh connection's first read creates the `-shm` file, and on a full filesystem SQLite
    reports that as a plain "disk I/O error": read as damage, it moved a sound index aside).

    Schema presence (catches a truncated or foreign file), then, when `thorough`,
    `PRAGMA quick_check`, which reads every page (seconds for a large index), so only a
    long-running writer (the daemon) pays it, once at open.
    """
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        missing = [t for t in ("meta", "files", "chunks", "chunks_fts") if t not in names]
        if names and missing:
            return f"tables missing: {', '.join(missing)}"
        if not thorough:
            return ""
        rows = conn.execute("PRAGMA quick_check(3)").fetchall()
    except db.DatabaseError as exc:
        if is_disk_full(exc, path):
            raise
        return str(exc)
    problems = [str(r[0]) for r in rows if r and r[0] != "ok"]
    return "; ".join(problems)[:300]


def move_aside(db_path: Path, *, keep: int = KEEP_CORRUPT) -> Path | None:
    """Rename the database and its sidecars to `<db>.corrupt-<time>`; None if nothing was
    there. Only the newest `keep` such sets are kept."""
    aside = db_path.with_name(f"{db_path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}"
                              f"-{time.time_ns() % 1_000_000:06d}")
    moved = False
    for suffix in SIDECARS:
        try:
            os.replace(f"{db_path}{suffix}", f"{aside}{suffix}")
            moved = moved or suffix == ""
        except FileNotFoundError:
            pass
    _prune_corrupt(db_path, keep)
    return aside if moved else None


def _prune_corrupt(db_path: Path, keep: int) -> None:
    pattern = f"{glob.escape(str(db_path))}.corrupt-*"
    bases = sorted({p for p in glob.glob(pattern) if not p.endswith(SIDECARS[1:])},
                   reverse=True)
    for base in bases[keep:]:
        remove_set(Path(base))


def remove_set(base: Path) -> None:
    for suffix in SIDECARS:
        try:
            os.unlink(f"{base}{suffix}")
        except FileNotFoundError:
            pass


def remove_leftovers(db_path: Path) -> list[str]:
    """Delete the temporary copies a killed rebuild or swap left (`<db>.tmp-*`,
    `<db>.backup-*` and their sidecars). Call only while holding the writer lock: then no
    other process can be building one of them."""
    removed: list[str] = []
    for kind in ("tmp", "backup"):
        for path in glob.glob(f"{glob.escape(str(db_path))}.{kind}-*"):
            try:
                os.unlink(path)
                removed.append(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("index_leftover_not_removed", path=path, error=str(exc))
    if removed:
        log.info("index_leftovers_removed", count=len(removed), paths=removed[:10])
    return removed


def pad_truncated(path: Path) -> None:
    """Give a truncated database file back the length its header states (a sparse hole):
    SQLite refuses to read any page of a file shorter than its header says, so without this
    not even the surviving pages could be salvaged."""
    try:
        with open(path, "r+b") as fh:
            header = fh.read(100)
            if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
                return
            page_size = int.from_bytes(header[16:18], "big")
            page_size = 65536 if page_size == 1 else page_size
            wanted = page_size * int.from_bytes(header[28:32], "big")
            if os.fstat(fh.fileno()).st_size < wanted:
                fh.truncate(wanted)
    except OSError as exc:
        log.warning("salvage_pad_failed", path=str(path), error=str(exc))


_CACHE_COLUMNS = "provider, model, provider_key, hash, embedding, dims, updated_at"
# One `embedding_cache` row as read from a damaged file: the values are checked, not trusted.
CacheRow = tuple[object, ...]


def salvage_embeddings(source: db.Connection, insert: Callable[[list[CacheRow]], None], *,
                       batch: int = 256, max_errors: int = MAX_SALVAGE_ERRORS) -> int:
    """Copy every readable `embedding_cache` row from `source` (a damaged database) through
    `insert`, walking rowids and stepping over pages that cannot be read. Returns the rows
    read; never raises for damage."""
    saved = 0
    errors = 0
    last = -1
    step = 1
    try:
        top = source.execute("SELECT max(rowid) FROM embedding_cache").fetchone()[0]
    except db.DatabaseError:
        top = None
    while errors < max_errors:
        try:
            rows = source.execute(
                f"SELECT rowid, {_CACHE_COLUMNS} FROM embedding_cache WHERE rowid > ? "
                "ORDER BY rowid LIMIT ?", (last, batch)).fetchall()
        except db.DatabaseError:
            errors += 1
            if top is not None and last >= top:
                break
            last += step  # skip the unreadable stretch, a bit further each time
            step = min(step * 2, 4096)
            continue
        if not rows:
            break
        step = 1
        good = [r[1:] for r in rows if _plausible(r[1:])]
        if good:
            try:
                insert(good)
                saved += len(good)
            except db.DatabaseError as exc:
                if is_disk_full(exc):
                    raise
                errors += 1
        last = rows[-1][0]
    return saved


def _plausible(row: CacheRow) -> bool:
    if len(row) != 7 or not all(isinstance(v, str) for v in row[:5]):
        return False
    embedding = row[4]
    return isinstance(embedding, str) and embedding.startswith("[") and embedding.endswith("]")
