"""SQLite's errors turned into the interface's (`store.base`) where they leave this backend.

Callers above the store never see a driver exception: they heal on `IndexDamagedError`, retry
on `DiskFullError`, skip one file on `RowRejectedError`, and treat any other database failure
as `StoreUnavailableError` (the store cannot serve right now; the daemon retries).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from openmemd.store.base import IndexDamagedError, RowRejectedError, StoreUnavailableError
from openmemd.store.sqlite import db, health

# Database errors that belong to one file's data (a constraint, a value SQLite refuses): the
# sync skips that file. Every other database error concerns the whole index.
_ROW_ERRORS = tuple(getattr(m, name) for m in (db.sqlite3, db._stdlib_sqlite3)
                    for name in ("IntegrityError", "DataError"))


def translate(exc: BaseException, db_path: Path) -> BaseException:
    """The interface's error for `exc` (raised while using the index at `db_path`); `exc`
    itself when it is not a database error nor a full disk."""
    if isinstance(exc, _ROW_ERRORS):
        return RowRejectedError(str(exc))
    if health.is_disk_full(exc, db_path):
        return health.disk_full(db_path, exc)
    if not isinstance(exc, db.DatabaseError):
        return exc
    if health.is_damage(exc):
        # The message is the reason `heal` records (status shows it).
        return IndexDamagedError(str(exc))
    return StoreUnavailableError(f"the index {db_path} cannot be used right now: {exc}")


@contextmanager
def translated(db_path: Path) -> Iterator[None]:
    """Run a block against the index, raising the interface's errors."""
    try:
        yield
    except (*db.DatabaseError, OSError) as exc:
        error = translate(exc, db_path)
        if error is exc:
            raise
        raise error from exc
