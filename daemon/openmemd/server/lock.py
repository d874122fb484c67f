"""One daemon per endpoint: an flock(2)-held lock file that records the owner's PID.

The kernel releases an flock when its process dies, however it dies, so a lock file left by a
crash is never "held": the next daemon takes it and overwrites the stale PID (openmemd.locks).
The PID in the file only serves the error message of a second instance.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from openmemd import locks
from openmemd.errors import OpenmemdError


class AlreadyRunning(OpenmemdError):
    code = "unavailable"

    def __init__(self, message: str, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid


class PidLock:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    def acquire(self, what: str = "") -> None:
        """Take the lock or raise AlreadyRunning naming the holder's PID."""
        locks.private_parent(self.path)
        fd = locks.open_lock_file(self.path, cloexec=True)
        try:
            taken = locks.try_lock(fd)
        except OSError:
            os.close(fd)
            raise
        if not taken:
            pid = _read_pid(fd)
            os.close(fd)
            who = f"pid {pid}" if pid else "another process"
            raise AlreadyRunning(f"openmemd is already running ({who}) {what}; lock file "
                                 f"{self.path}".replace("  ", " "), pid)
        locks.record_pid(fd, sync=True)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        # The file stays: unlinking it would let a racing starter lock an orphaned inode.
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> PidLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    data = locks.recorded_pid(fd, 32)
    return int(data) if data.isdigit() else None
