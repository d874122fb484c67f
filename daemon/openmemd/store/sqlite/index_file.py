"""Whether the index file can be opened at all, told before SQLite opens it.

SQLite says "unable to open database file" for a file it may not read, a folder in the file's
place or a state dir that is a regular file, which read as damage moved a sound index aside
and threw its embeddings away; and opening a FIFO blocks for ever. None of these is damage: the
file is kept and the one-line message names it and the fix. Only `os.stat` and a non-blocking
open are used here, so a FIFO is refused without waiting for a writer that never comes.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from openmemd.store.base import IndexUnusableError

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISDIR, "a folder"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISREG, "a regular file"))
_NOT_ALLOWED = (errno.EACCES, errno.EPERM)
_NONBLOCK, _CLOEXEC = getattr(os, "O_NONBLOCK", 0), getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class FileProblem:
    """What keeps the index file from being opened (naming the path) and the fix."""

    message: str
    fix: str

    def error(self) -> IndexUnusableError:
        return IndexUnusableError(f"{self.message}; fix: {self.fix}")


def kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def from_os_error(exc: OSError, path: Path, *, write: bool) -> FileProblem:
    """The problem an OSError raised opening (or stat-ing) the index at `path` stands for."""
    reason = (exc.strerror or str(exc)).lower()
    if exc.errno in _NOT_ALLOWED:
        return FileProblem(
            f"the index {path} cannot be {'written' if write else 'read'}: {reason} (a "
            "permission problem, not damage: the file is kept)",
            f"chown $USER {path} && chmod 600 {path} (and chmod 700 {path.parent})")
    if exc.errno == errno.ENOTDIR:
        return _not_a_directory(path)
    return FileProblem(f"the index {path} cannot be opened: {reason}",
                       f"check {path} and its folder")


def _not_a_directory(path: Path) -> FileProblem:
    """The first folder on the way to `path` that is not one (a state dir made a file)."""
    for parent in reversed(path.parents):
        try:
            mode = os.stat(parent).st_mode
        except OSError:
            break
        if not stat.S_ISDIR(mode):
            return FileProblem(f"{parent} is {kind(mode)}, not a directory: the index {path} "
                               "cannot be kept under it",
                               f"move {parent} aside (mv {parent} {parent}.bak), or set "
                               "state_dir to a directory")
    return FileProblem(f"a part of {path} is not a directory", f"check the folders of {path}")


def location_problem(path: Path) -> FileProblem | None:
    """By `os.stat` only: a folder on the way that is a file, or something other than a regular
    file at `path` (a FIFO, a folder, a socket). None when it is a regular file or missing."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None  # created when first indexed
    except OSError as exc:
        return from_os_error(exc, path, write=False)
    if stat.S_ISREG(mode):
        return None
    return FileProblem(f"{path} is {kind(mode)}, not an index file (refused, never opened)",
                       f"move it away (mv {path} {path}.bak): the next index or search "
                       "builds a new one")


def open_problem(path: Path, *, write: bool) -> FileProblem | None:
    """`location_problem`, then the file opened as SQLite will open it (non-blocking, closed at
    once): a permission error is said as one, not met by SQLite and read as damage."""
    found = location_problem(path)
    if found is not None:
        return found
    flags = (os.O_RDWR if write else os.O_RDONLY) | _NONBLOCK | _CLOEXEC
    try:
        os.close(os.open(path, flags))
    except FileNotFoundError:
        return None  # missing (or gone meanwhile): SQLite creates it or says so
    except OSError as exc:
        return from_os_error(exc, path, write=write)
    return None


def require_openable(path: str | Path, *, write: bool) -> None:
    """Raise IndexUnusableError (the file kept, the fix named) unless SQLite may open `path`."""
    found = open_problem(Path(path), write=write)
    if found is not None:
        raise found.error()
