"""Files that cannot be indexed: the sync goes on past them, and each is remembered with its
reason until it changes, so it is reported on every sync but read and logged only once."""

from __future__ import annotations

from openmemd.index.scan import FileEntry, ScanIssue, display_path
from openmemd.log import get_logger
from openmemd.store.sqlite import db, file_state
from openmemd.store.sqlite.db import Connection
from openmemd.store.sqlite.file_state import Skipped

log = get_logger(__name__)

# Database errors that belong to one file's data (a constraint, a value SQLite refuses): that
# file is skipped. Any other database error (disk full, a damaged index) concerns the whole
# index and is raised.
_PER_FILE_DB_ERRORS = tuple(getattr(m, name) for m in (db.sqlite3, db._stdlib_sqlite3)
                            for name in ("IntegrityError", "DataError"))


def is_per_file(exc: Exception) -> bool:
    """Whether `exc`, raised while indexing one file, concerns that file only."""
    return not isinstance(exc, db.DatabaseError) or isinstance(exc, _PER_FILE_DB_ERRORS)


def _raw_name(path: str) -> bytes:
    """The file name's bytes (names that are not UTF-8 come from the walk as lone surrogates)."""
    return path.encode("utf-8", "surrogateescape")


class SkipMemo:
    """The `openmemd_skipped` table, read once per sync; writes join the caller's transaction."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._by_path: dict[str, Skipped] = {}

    def load(self) -> None:
        self._by_path = {k.decode("utf-8", "surrogateescape"): v
                         for k, v in file_state.load_skipped(self.conn).items()}

    def paths(self) -> set[str]:
        return set(self._by_path)

    def known(self, entry: FileEntry) -> ScanIssue | None:
        """The recorded issue if this file was skipped and has not changed since."""
        hit = self._by_path.get(entry.path)
        if hit is None or hit.signature != tuple(entry[1:]):
            return None
        return ScanIssue(hit.path, hit.reason)

    def add(self, entry: FileEntry, reason: str) -> ScanIssue:
        shown = display_path(entry.path)
        log.warning("file skipped", path=shown, reason=reason)
        skipped = Skipped(tuple(entry[1:]), shown, reason)  # type: ignore[arg-type]
        file_state.set_skipped(self.conn, _raw_name(entry.path), skipped)
        self._by_path[entry.path] = skipped
        return ScanIssue(shown, reason)

    def clear(self, path: str) -> None:
        if self._by_path.pop(path, None) is not None:
            file_state.delete_skipped(self.conn, _raw_name(path))
