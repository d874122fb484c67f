"""Opening the writer's database safely, and replacing a damaged one while the daemon runs.

Damage is found when the writer opens the file (schema + `PRAGMA quick_check`), when the file
it opened is deleted or replaced (inode check before each write), and when any query fails
with a damage error. Then: the bad files move to `<db>.corrupt-<time>`, a fresh database is
created in place, the embeddings still readable are salvaged into it, and the caller rebuilds
from the Markdown (keyword rows first, so searches find notes again within seconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from openmemd.log import get_logger
from openmemd.store.base import DiskFullError, IndexUnusableError, Recovery
from openmemd.store.sqlite import db, health, index_file, reindex, schema
from openmemd.store.sqlite.health import FileIdentity

log = get_logger(__name__)


@dataclass(frozen=True)
class Opened:
    conn: db.Connection
    vec: db.VectorSupport
    identity: FileIdentity | None
    recovery: Recovery | None  # set when the file had to be replaced


def _connect(db_path: Path) -> tuple[db.Connection, db.VectorSupport]:
    try:
        return db.connect(db_path, check_same_thread=False)
    except (*db.DatabaseError, OSError) as exc:
        if health.is_disk_full(exc, db_path):
            raise health.disk_full(db_path, exc) from None
        raise


def open_writer(db_path: Path, *, thorough: bool = True) -> Opened:
    """The writer's connection, with the schema in place; a damaged file is replaced."""
    existed = db_path.exists()
    conn = None
    try:
        if not existed:
            _create(db_path)
        conn, vec = _connect(db_path)
        problem = health.quick_check(conn, db_path, thorough=thorough) if existed else ""
        if not problem:
            schema.ensure_schema(conn)
            return Opened(conn, vec, FileIdentity.of(db_path), None)
    except DiskFullError:
        _close(conn)
        raise
    except db.DatabaseError as exc:
        if health.is_disk_full(exc, db_path):
            _close(conn)
            raise health.disk_full(db_path, exc) from None
        problem = str(exc)
    return replace_damaged(db_path, problem, conn)


def _create(db_path: Path) -> None:
    """A new index file, which takes its name only once its schema is whole: created in place,
    its tables appeared one by one, and a reader opening it meanwhile (a status or a search
    during a fresh daemon's start) found `chunks` but no `embedding_cache`, called the index
    damaged and asked for a rebuild."""
    def fill(tmp: Path) -> None:
        conn, _vec = _connect(tmp)
        try:
            schema.ensure_schema(conn)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # one file to move
        finally:
            conn.close()

    reindex.build_and_swap(db_path, fill)


def replace_damaged(db_path: Path, reason: str, old: db.Connection | None) -> Opened:
    """Move the damaged files aside and open a fresh database holding what could be
    salvaged of the embedding cache. `old` (a connection to the damaged file, possibly
    already unlinked) is read for the salvage and closed. A file SQLite may not open
    (permissions, a FIFO) is not damage: IndexUnusableError, and it stays where it is."""
    kept = index_file.open_problem(db_path, write=False)
    if kept is not None:
        _close(old)
        raise kept.error()
    moved = health.move_aside(db_path)
    log.warning("index_damaged_rebuilding", path=str(db_path), reason=reason,
                moved_to=str(moved) if moved else None)
    conn, vec = _connect(db_path)
    try:
        schema.ensure_schema(conn)
    except db.DatabaseError as exc:
        _close(conn)
        if health.is_disk_full(exc, db_path):
            raise health.disk_full(db_path, exc) from None
        raise
    salvaged = salvage_into(conn, old, moved)
    _close(old)
    rec = Recovery(reason, str(moved) if moved else None, salvaged)
    log.info("index_recreated", path=str(db_path), salvaged_embeddings=salvaged)
    return Opened(conn, vec, FileIdentity.of(db_path), rec)


def salvage_into(conn: db.Connection, old: db.Connection | None, moved: Path | None) -> int:
    """Copy readable embedding-cache rows from the damaged database; 0 if nothing can be
    read. Never raises for damage: a failed salvage only costs re-embedding."""
    def insert(rows: list[health.CacheRow]) -> None:
        with db.write_transaction(conn):
            conn.executemany("INSERT OR IGNORE INTO embedding_cache (provider, model, "
                             "provider_key, hash, embedding, dims, updated_at) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    source, own, saved = old, False, 0
    try:
        if moved is not None:
            health.pad_truncated(moved)
        if source is not None:  # sees the damaged file as its writer last did (or deleted)
            saved = health.salvage_embeddings(source, insert)
        if not saved and moved is not None:
            source, _ = db.connect(moved, readonly=True, check_same_thread=False)
            own = True
            saved = health.salvage_embeddings(source, insert)
        return saved
    except DiskFullError:
        raise
    except Exception as exc: # anything a broken file does: salvage nothing
        if health.is_disk_full(exc):
            raise health.disk_full(Path(str(moved or "index")), exc) from None
        log.warning("embedding_salvage_failed", error=f"{type(exc).__name__}: {exc}")
        return saved
    finally:
        if own:
            _close(source)


def copy_cache_tolerant(conn: db.Connection, old_db: Path) -> int:
    """The embedding cache of `old_db` into `conn` for a full rebuild: one fast ATTACH copy,
    else (a damaged old file) row by row, whatever can be read."""
    from openmemd.store.sqlite import reindex

    try:
        return reindex.copy_embedding_cache(conn, old_db)
    except db.DatabaseError as exc:
        if health.is_disk_full(exc):
            raise
        log.warning("embedding_cache_copy_failed_salvaging", error=str(exc))
    return salvage_into(conn, None, old_db)


def confirm_damage(db_path: Path) -> str:
    """Check the file with a fresh connection (a reader's error may be a passing one): the
    problem found, or ''."""
    if not db_path.exists():
        return "index file missing"
    conn = None
    try:
        conn, _ = db.connect(db_path, readonly=True, check_same_thread=False)
        return health.quick_check(conn, db_path)
    except IndexUnusableError:
        return ""  # not damage: the readers say what it is (permissions, a FIFO)
    except db.DatabaseError as exc:
        return "" if health.is_disk_full(exc, db_path) else str(exc)
    finally:
        _close(conn)


def _close(conn: db.Connection | None) -> None:
    if conn is not None:
        try:
            conn.close()
        except Exception: # a broken connection still has to go
            pass
