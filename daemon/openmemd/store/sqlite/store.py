"""`SqliteStore`: one agent's SQLite index file (`store.base.IndexStore`).

One writer across processes (an exclusive lock file beside the index, `<db>.lock`), opened
with its schema checked (every page too in the daemon) and replaced if damaged; per-thread
read-only readers (WAL: they never wait for the writer), reopened when the file is swapped
(a rebuild or a heal bumps `_generation`). A rebuild fills `<db>.tmp-*` seeded with the old
embedding cache and swaps it in atomically (store/sqlite/reindex.py); a heal moves the
damaged file aside and salvages its cache (store/sqlite/recovery.py).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from openmemd import locks
from openmemd.errors import BadRequestError, IndexLockedError
from openmemd.log import get_logger
from openmemd.store.base import IndexDamagedError, Recovery, StoreWriter, VectorMode
from openmemd.store.sqlite import db, health, recovery, reindex, resident, schema
from openmemd.store.sqlite.boundary import translate, translated
from openmemd.store.sqlite.guarded_reader import GuardedReader
from openmemd.store.sqlite.reader import SqliteReader
from openmemd.store.sqlite.writer import SqliteWriter

log = get_logger(__name__)

T = TypeVar("T")


class SqliteStore:
    backend = "sqlite"
    fts_tokenizer = schema.FTS_TOKENIZER_ID
    namespace = ""  # one file, one agent

    def __init__(self, db_path: Path, *, long_lived: bool = False) -> None:
        self.db_path = db_path
        # The daemon: it reads every page once when it opens the writer (a one-shot command
        # checks the schema and heals on the first damage error instead), and serves the
        # vector leg from resident matrices (loading one costs more than one query it serves).
        self.long_lived = long_lived
        if long_lived:
            resident.enable()
        self._lock = threading.RLock()  # the writer's state; callers serialise writes anyway
        self._lock_fd: int | None = None
        self._writer: SqliteWriter | None = None
        self._writer_id: health.FileIdentity | None = None  # the file the writer opened
        self._healed_at_open: Recovery | None = None  # see writer()
        self._local = threading.local()
        self._generation = 0  # bumped when the file is swapped or healed: readers reopen
        self._readers: list[db.Connection] = []
        self._readers_lock = threading.Lock()
        self._damage_seen = ""  # a reader's damage error, for damage() to confirm

    def location(self) -> str:
        return str(self.db_path)

    def exists(self) -> bool:
        return self.db_path.exists()

    # -- the writer --------------------------------------------------------------------------
    def _acquire_lock_file(self) -> None:
        if self._lock_fd is not None:
            return
        fd = locks.open_lock_file(f"{self.db_path}.lock")
        if not locks.try_lock(fd):
            holder = locks.recorded_pid(fd)
            os.close(fd)
            raise IndexLockedError(
                f"the index {self.db_path} is being written by another openmemd process"
                f"{f' (pid {holder})' if holder else ''}; use the running daemon "
                "(it answers these commands) or stop it first") from None
        locks.record_pid(fd, newline=False)
        self._lock_fd = fd
        health.remove_leftovers(self.db_path)  # we hold the lock: no rebuild is running

    def writer(self) -> SqliteWriter:
        """The writer. A file found damaged when it opens is replaced at once (its cache
        salvaged while the damaged connection is at hand) and IndexDamagedError raised until
        the caller calls `heal` (which reports that replacement) and refills the index."""
        with self._lock:
            if self._writer is None:
                self._acquire_lock_file()
                with translated(self.db_path):
                    opened = recovery.open_writer(self.db_path, thorough=self.long_lived)
                self._adopt(opened)
                self._healed_at_open = opened.recovery
            writer = self._writer
            if self._healed_at_open is not None or writer is None:
                raise IndexDamagedError(self._healed_at_open.reason if self._healed_at_open
                                        else "index not open")
            return writer

    def _adopt(self, opened: recovery.Opened) -> SqliteWriter:
        self._writer = SqliteWriter(opened.conn, opened.vec, self.db_path)
        self._writer_id = opened.identity
        if opened.recovery is not None:
            self._generation += 1
        if not opened.vec.available:
            log.warning("sqlite-vec unavailable; vectors are searched in process",
                        reason=opened.vec.reason)
        return self._writer

    def heal(self, reason: str) -> Recovery:
        with self._lock:
            self._damage_seen = ""
            done, self._healed_at_open = self._healed_at_open, None
            if done is None:
                self._acquire_lock_file()
                old, self._writer = self._writer, None
                with translated(self.db_path):
                    opened = recovery.replace_damaged(self.db_path, reason,
                                                      old.conn if old is not None else None)
                self._adopt(opened)
                done = opened.recovery
            assert done is not None
            return done

    def adopt(self) -> str:
        raise BadRequestError(f"{self.db_path} is this state dir's own index file: there is "
                              "nothing to adopt (`store adopt` is for a PostgreSQL namespace)")

    def damage(self) -> str:
        reason = (health.replaced_reason(self.db_path, self._writer_id)
                  if self._writer is not None else "")
        if not reason and self._damage_seen:  # a reader's error may be a passing one
            reason, self._damage_seen = recovery.confirm_damage(self.db_path), ""
        return reason

    def rebuild(self, build: Callable[[StoreWriter], T]) -> T:
        with self._lock:
            self.writer()  # holds the lock: nobody else builds or swaps
            result: list[T] = []

            def fill(tmp: Path) -> None:
                conn, vec = db.connect(tmp, check_same_thread=False)
                try:
                    schema.ensure_schema(conn)
                    recovery.copy_cache_tolerant(conn, self.db_path)
                    result.append(build(SqliteWriter(conn, vec, self.db_path)))
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # one file to swap
                finally:
                    conn.close()

            with translated(self.db_path):
                reindex.build_and_swap(self.db_path, fill)
            old, self._writer = self._writer, None
            if old is not None:
                old.conn.close()
            self._generation += 1
            self.writer()
            return result[0]

    # -- readers -----------------------------------------------------------------------------
    def _connection(self) -> tuple[db.Connection, db.VectorSupport]:
        """This thread's read-only connection (a reader never creates a missing file)."""
        local = self._local
        if getattr(local, "generation", None) != self._generation or local.conn is None:
            old = getattr(local, "conn", None)
            local.conn = local.reader = None
            if old is not None:
                old.close()
                with self._readers_lock:
                    if old in self._readers:  # close() may have taken it already
                        self._readers.remove(old)
            conn, vec = db.connect(self.db_path, readonly=True, check_same_thread=False)
            local.conn, local.vec, local.generation = conn, vec, self._generation
            with self._readers_lock:
                self._readers.append(conn)
        return local.conn, local.vec

    def reader(self) -> GuardedReader:
        with self.reading():
            conn, vec = self._connection()
        local = self._local
        reader: GuardedReader | None = local.reader
        if reader is None:
            reader = local.reader = GuardedReader(SqliteReader(conn, vec, str(self.db_path)),
                                                  self.reading)
        return reader

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Run a read, raising the interface's errors; damage is remembered for `damage()`
        to confirm, and every thread's reader reopens (the file may be replaced by then)."""
        try:
            yield
        except (*db.DatabaseError, OSError) as exc:
            error = translate(exc, self.db_path)
            if isinstance(error, IndexDamagedError):
                self._damage_seen = str(error)
                self._generation += 1
            if error is exc:
                raise
            raise error from exc

    # -- facts and upkeep --------------------------------------------------------------------
    def _vec_support(self) -> db.VectorSupport:
        if getattr(self._local, "conn", None) is not None:
            vec: db.VectorSupport = self._local.vec
            return vec
        if self._writer is not None:
            return self._writer.vec
        conn = db._module().connect(":memory:")
        try:
            return db.load_vec(conn)
        finally:
            conn.close()

    def vector_mode(self) -> VectorMode:
        vec = self._vec_support()
        if vec.available:
            return VectorMode(True, "sqlite-vec", version=vec.version)
        return VectorMode(True, "in-process", reason=f"sqlite-vec unavailable: {vec.reason}")

    def status(self) -> dict[str, Any]:
        module = db._module()
        vec = self._vec_support()
        return {"backend": self.backend, "path": str(self.db_path),
                "driver": module.__name__, "sqliteVersion": module.sqlite_version,
                "sqliteVec": vec.version if vec.available else None}

    def maintain(self) -> None:
        with self._lock:
            conn = self.writer().conn
            with translated(self.db_path):
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                conn.execute("PRAGMA optimize")

    def close(self) -> None:
        with self._readers_lock:
            for conn in self._readers:
                try:
                    conn.close()
                except Exception:
                    pass
            self._readers.clear()
        with self._lock:
            if self._writer is not None:
                try:
                    self._writer.conn.execute("PRAGMA optimize")
                except db.DatabaseError:
                    pass  # a damaged or full index still has to close
                finally:
                    self._writer.conn.close()
                self._writer = None
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None
