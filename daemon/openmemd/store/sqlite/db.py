"""Opening SQLite: sqlean (a drop-in sqlite3 that can load extensions) with sqlite-vec loaded.

Many CPython builds, this machine's included, cannot load SQLite extensions, so the stdlib
module is only used when it can. If sqlite-vec still cannot load, the connection works without
it and `VectorSupport.reason` says why (vectors are then searched in process).
"""

from __future__ import annotations

import os
import sqlite3 as _stdlib_sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmemd import paths
from openmemd.store.checks import BackendCheck
from openmemd.store.sqlite.index_file import require_openable

try:  # pragma: no branch
    import sqlean as sqlite3

    DRIVER = "sqlean"
except ImportError:  # pragma: no cover - sqlean is a hard dependency
    import sqlite3

    DRIVER = "sqlite3"

# sqlean ships no type information, so its Connection is Any to mypy; and the stdlib's
# sqlite3.Connection would reject sqlean's connections (the same interface, another class).
# Values read through a Connection are therefore Any: callers convert them (int(), str()).
Connection = Any
# For `except` clauses: the errors of either driver (see DRIVER_ENV below).
DatabaseError = (sqlite3.DatabaseError, _stdlib_sqlite3.DatabaseError)
OperationalError = sqlite3.OperationalError
# Errors about one statement's data (a constraint, a value SQLite refuses), of either driver.
ROW_ERRORS = (sqlite3.IntegrityError, sqlite3.DataError, _stdlib_sqlite3.IntegrityError,
              _stdlib_sqlite3.DataError)

BUSY_TIMEOUT_MS = 5000
# Diagnostics: OPENMEMD_SQLITE_DRIVER=sqlite3 uses the standard library's module, e.g. to see
# how openmemd behaves on a Python that cannot load SQLite extensions.
DRIVER_ENV = "OPENMEMD_SQLITE_DRIVER"


def _module() -> Any:  # the DB-API module to connect with
    if os.environ.get(DRIVER_ENV) == "sqlite3":
        return _stdlib_sqlite3
    return sqlite3


@dataclass(frozen=True)
class VectorSupport:
    available: bool
    version: str = ""
    reason: str = ""


def connect(path: str | Path, *, readonly: bool = False, immutable: bool = False,
            check_same_thread: bool = True) -> tuple[Connection, VectorSupport]:
    """Open the index database with WAL, busy_timeout and sqlite-vec (when it loads).

    Raises IndexUnusableError, before SQLite sees it, for a file it may not open (permissions,
    a FIFO, a folder): never damage. `immutable` (read-only): no -wal/-shm is created (doctor,
    on a file no process has open)."""
    require_openable(path, write=not readonly)
    module = _module()
    if readonly:
        uri = f"file:{Path(path).as_posix()}?mode=ro{'&immutable=1' if immutable else ''}"
        conn = module.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                              check_same_thread=check_same_thread, isolation_level=None)
    else:
        paths.private_file(path)  # 0600 before SQLite creates it, its -wal and -shm follow
        conn = module.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000,
                              check_same_thread=check_same_thread, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not readonly:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = OFF")
    return conn, load_vec(conn)


def load_vec(conn: Connection) -> VectorSupport:
    try:
        import sqlite_vec
    except ImportError as exc:  # pragma: no cover - hard dependency
        return VectorSupport(False, reason=f"sqlite-vec not installed ({exc})")
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        (version,) = conn.execute("SELECT vec_version()").fetchone()
        return VectorSupport(True, version=str(version))
    except AttributeError:
        driver = "sqlite3" if isinstance(conn, _stdlib_sqlite3.Connection) else DRIVER
        return VectorSupport(False, reason=f"this Python's {driver} module cannot load "
                                           "SQLite extensions")
    except Exception as exc:  # any load failure means: vectors in process
        return VectorSupport(False, reason=str(exc) or type(exc).__name__)


def probe_vec() -> VectorSupport:
    """Whether sqlite-vec loads into the driver the store connects with, in a throwaway
    in-memory database (`openmemd doctor`: nothing is written anywhere)."""
    conn = _module().connect(":memory:")
    try:
        return load_vec(conn)
    finally:
        conn.close()


def check_driver() -> BackendCheck:
    """`openmemd doctor`: whether sqlite-vec loads into the driver the store connects with."""
    forced = os.environ.get(DRIVER_ENV) == "sqlite3"
    driver = f"sqlite3 ({DRIVER_ENV}=sqlite3)" if forced else DRIVER
    support = probe_vec()
    if support.available:
        return BackendCheck("sqlite-vec", f"sqlite-vec {support.version} loads into {driver}")
    return BackendCheck(
        "sqlite-vec", problem=f"sqlite-vec does not load into {driver} ({support.reason}): "
        "vectors are searched in process, which is slower on a large index",
        fix=f"unset {DRIVER_ENV}" if forced
        else "pip install --force-reinstall sqlean.py sqlite-vec")


def sqlite_version(conn: Connection) -> str:
    return str(conn.execute("SELECT sqlite_version()").fetchone()[0])


@contextmanager
def write_transaction(conn: Connection) -> Iterator[None]:
    """`BEGIN IMMEDIATE` … `COMMIT`, rolled back on any error (connections are autocommit).

    IMMEDIATE takes the write lock up front, so a busy database waits (busy_timeout) at the
    start instead of failing half-way through a write.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        # SQLite has already rolled back after some errors (SQLITE_FULL, IOERR): a second
        # ROLLBACK would fail and hide the error that matters.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
