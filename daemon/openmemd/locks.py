"""The one mechanism behind openmemd's own lock files: an exclusive flock(2) on a 0600 file.

The kernel releases an flock when its holder dies, however it dies, so none of these locks
can be left stale: a crashed owner's file is simply taken by the next process, which
overwrites the PID recorded in it (the PID only names the holder in error messages).
Closing the descriptor releases the lock.

Used by the index writer lock (api), the one-daemon-per-endpoint lock (server.lock) and the
MEMORY.md write lock (dreaming.lockfile). The recall store's lock is the exception: its file
format, `<pid>:<epochMs>` created with O_EXCL, is OpenClaw's, so both programs can share it;
it keeps its own code (dreaming.lockfile) with OpenClaw's stale-owner rule.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: callers fall back to in-process locks
    fcntl = None  # type: ignore[assignment]

# Whether lock files can take an OS lock here (not on Windows).
HAS_FLOCK = fcntl is not None


def open_lock_file(path: str | os.PathLike[str], *, nofollow: bool = False,
                   cloexec: bool = False) -> int:
    flags = os.O_RDWR | os.O_CREAT
    if nofollow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    if cloexec:
        flags |= os.O_CLOEXEC
    return os.open(path, flags, 0o600)


def try_lock(fd: int) -> bool:
    """Take the exclusive lock on `fd` without waiting; False when another process holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def lock_within(fd: int, timeout: float, poll: float) -> bool:
    """Wait up to `timeout` seconds for the exclusive lock on `fd`; False when it timed out."""
    deadline = time.monotonic() + max(0.0, timeout)
    while not try_lock(fd):
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll)
    return True


def record_pid(fd: int, *, newline: bool = True, sync: bool = False) -> None:
    """Ours now: whatever PID was in the file belonged to a process that is gone."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}{chr(10) if newline else ''}".encode(), 0)
    if sync:
        os.fsync(fd)


def recorded_pid(fd: int, limit: int = 64) -> str:
    """The PID text a holder wrote into its lock file ("" when unreadable)."""
    try:
        return os.pread(fd, limit, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""


def private_parent(path: str | os.PathLike[str]) -> None:
    Path(path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
