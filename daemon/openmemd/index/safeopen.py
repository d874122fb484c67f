"""Opening a file under the workspace without ever leaving it, even while links are swapped.

Checking a path (lstat walk, realpath) and then opening it is a race: a directory on the way
can become a symlink to anywhere in between, and O_NOFOLLOW only guards the last component.
So the path is opened one component at a time, each relative to the descriptor of the
directory before it, every component with O_NOFOLLOW: what is opened is what was checked.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path, PurePosixPath

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# A FIFO named like a note must not block the reader: open without waiting, then fstat.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class EscapeError(OSError):
    """A component of the path is a symlink (or not a directory where one is needed)."""


def open_beneath(root: Path, rel: str) -> int:
    """A read-only descriptor for `root/rel`, refusing any symlink on the way (EscapeError).

    `rel` is workspace-relative with forward slashes and no `..`; the root itself may be a
    symlink (the user chose it). Other errors (ENOENT, EACCES) are raised as OSError.
    """
    parts = PurePosixPath(rel).parts
    if not parts or any(p in ("", ".", "..", "/") for p in parts):
        raise EscapeError(errno.EINVAL, f"not a workspace-relative path: {rel!r}")
    dir_fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                next_fd = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC,
                                  dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise EscapeError(exc.errno, f"{part}: a symlink or not a directory"
                                      ) from None
                raise
            os.close(dir_fd)
            dir_fd = next_fd
        try:
            return os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK,
                           dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise EscapeError(exc.errno, f"{parts[-1]}: a symlink") from None
            raise
    finally:
        os.close(dir_fd)

