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
from openmemd.store.sqlite import db, health, index_file


def translate(exc: BaseException, db_path: Path) -> BaseException:
    """The interface's error for `exc` (raised while using the index at `db_path`); `exc`
    itself when it is not a database error nor a full disk."""
    if isinstance(exc, db.ROW_ERRORS):  # one file's data: the sync skips that file only
        return RowRejectedError(str(exc))
    if health.is_disk_full(exc, db_path):
        return health.disk_full(db_path, exc)
    if not isinstance(exc, db.DatabaseError):
        return exc
    if health.is_damage(exc):
        # "unable to open" may be a permission: said as such, the file kept (not healed)
        found = index_file.open_problem(db_path, write=False) if _cannot_open(exc) else None
        if found is not None:
            return found.error()
        # The message is the reason `heal` records (status shows it).
        return IndexDamagedError(str(exc))
    return StoreUnavailableError(f"the index {db_path} cannot be used right now: {exc}")


def _cannot_open(exc: BaseException) -> bool:
    return "unable to open" in str(exc).lower()


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
