"""Files that cannot be indexed: the sync goes on past them, and each is remembered with its
reason until it changes, so it is reported on every sync but read and logged only once."""

from __future__ import annotations

from openmemd.errors import IndexLockedError
from openmemd.index.scan import FileEntry, ScanIssue, display_path
from openmemd.log import get_logger
from openmemd.store.base import (
    DiskFullError,
    IndexDamagedError,
    RowRejectedError,
    Skipped,
    StoreUnavailableError,
    StoreWriter,
)

log = get_logger(__name__)

# What the store raises about the whole index (damaged, full, unreachable, locked): never a
# reason to skip one file. Rows the store refused (RowRejectedError) concern that file only.
_WHOLE_INDEX = (IndexDamagedError, DiskFullError, StoreUnavailableError, IndexLockedError)


def is_per_file(exc: Exception) -> bool:
    """Whether `exc`, raised while indexing one file, concerns that file only."""
    return isinstance(exc, RowRejectedError) or not isinstance(exc, _WHOLE_INDEX)


def _raw_name(path: str) -> bytes:
    """The file name's bytes (names that are not UTF-8 come from the walk as lone surrogates)."""
    return path.encode("utf-8", "surrogateescape")


class SkipMemo:
    """The store's skipped files, read once per sync; writes join the caller's transaction."""

    def __init__(self, writer: StoreWriter) -> None:
        self.writer = writer
        self._by_path: dict[str, Skipped] = {}

    def load(self) -> None:
        self._by_path = {k.decode("utf-8", "surrogateescape"): v
                         for k, v in self.writer.load_skipped().items()}

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
        log.warning("file skipped", path=shown, reason=reason, in_reply=True)
        skipped = Skipped(tuple(entry[1:]), shown, reason)  # type: ignore[arg-type]
        self.writer.set_skipped(_raw_name(entry.path), skipped)
        self._by_path[entry.path] = skipped
        return ScanIssue(shown, reason)

    def clear(self, path: str) -> None:
        if self._by_path.pop(path, None) is not None:
            self.writer.delete_skipped(_raw_name(path))
