"""The single-writer lock on a workspace's recall store, shared with OpenClaw.

Two layers, like OpenClaw: an in-process lock (so threads of one daemon queue up) and the lock
file `memory/.dreams/short-term-promotion.lock`, created exclusively with `<pid>:<epochMs>`, so
OpenClaw and openmemd never interleave read-modify-write cycles on the same store. A lock file
whose owner we can judge (taken by openmemd on this host, see lockowner.py) and which is dead
is taken over at once, so a killed sweep does not block the next; any other lock is stale when
older than 60 s and its owner is not alive (or its content is unreadable), OpenClaw's rule.
Otherwise we retry every 40 ms until the timeout. The lock is re-entrant within a thread.

`memory_md_lock` is a second, narrower lock: THE lock around every write of MEMORY.md (the deep
phase's read-check-replace, an agent's appended note). It is held only for the few
milliseconds of one write, never for a whole sweep, because an agent's append waits on it; and
it is an flock, so the kernel releases it when its holder dies (no stale state at all).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from openmemd import locks
from openmemd.errors import UnavailableError

from . import lockowner
from .layout import LOCK_PATH, MEMORY_LOCK_PATH
from .markdown_io import workspace_target
from .modes import make_dirs

STALE_SECONDS = 60.0
DEFAULT_TIMEOUT = 10.0
RETRY_SECONDS = 0.04


class LockTimeoutError(UnavailableError):
    """Another writer (OpenClaw or another openmemd) held the store lock too long."""


class _Holder:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.file_token: str | None = None  # set while this process holds the lock file


_holders: dict[str, _Holder] = {}
_holders_guard = threading.Lock()


def _holder(path: Path) -> _Holder:
    key = os.path.realpath(path)  # one lock per workspace, however its path is spelled
    with _holders_guard:
        holder = _holders.get(key)
        if holder is None:
            holder = _holders[key] = _Holder()
        return holder


@contextlib.contextmanager
def store_lock(workspace: Path, *, timeout: float = DEFAULT_TIMEOUT,
               file_lock: bool = True) -> Iterator[None]:
    """Hold the workspace's store lock. `file_lock=False` (dry runs) creates no file at all."""
    path = workspace_target(Path(workspace), LOCK_PATH)  # refuses a symlinked memory/.dreams
    holder = _holder(path)
    if not holder.lock.acquire(timeout=max(0.0, timeout)):
        raise LockTimeoutError(f"timed out after {timeout:g}s waiting for the dreaming store "
                               f"lock of {workspace} (held by this process)")
    took_file = False
    try:
        if file_lock and holder.file_token is None:
            make_dirs(Path(workspace), path.parent)
            holder.file_token = _acquire_file(path, timeout)
            took_file = True
        try:
            yield
        finally:
            if took_file:
                _release_file(path, holder.file_token)
                holder.file_token = None
    finally:
        holder.lock.release()


def _acquire_file(path: Path, timeout: float) -> str:
    deadline = time.monotonic() + max(0.0, timeout)
    while True:
        token = f"{os.getpid()}:{int(time.time() * 1000)}\n"
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            if _steal_if_stale(path):
                continue
            if time.monotonic() >= deadline:
                raise LockTimeoutError(
                    f"timed out after {timeout:g}s waiting for {path} (another OpenClaw or "
                    "openmemd process is writing the recall store)") from None
            time.sleep(RETRY_SECONDS)
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(token)
        lockowner.write_sidecar(path, token)
        return token


def _release_file(path: Path, token: str | None) -> None:
    # Only remove the file if it is still ours: a stalled owner's lock may have been stolen.
    try:
        current = path.read_text(encoding="utf-8")
    except OSError:
        return
    if token is not None and current == token:
        with contextlib.suppress(OSError):
            path.unlink()
        lockowner.remove_sidecar(path, token)


def _steal_if_stale(path: Path) -> bool:
    """Remove a stale lock file; True if the caller should retry at once."""
    try:
        age = time.time() - path.stat().st_mtime
        content = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return True  # released between our open and stat
    except (OSError, UnicodeDecodeError):
        content = None
        known = _age(path)
        if known is None:
            return False
        age = known
    owner = lockowner.parse_token(content) if content is not None else None
    if owner is not None and lockowner.is_ours_to_judge(path, content or ""):
        stale = lockowner.owner_gone(*owner)  # dead (or pid reused): take it over now
    elif age <= STALE_SECONDS:
        return False
    else:
        stale = owner is None or not lockowner.process_alive(owner[0])
    if not stale:
        return False
    # Another waiter may have taken it over since we read it: remove only what we judged.
    try:
        if content is not None and path.read_text(encoding="utf-8") != content:
            return True
    except (OSError, UnicodeDecodeError):
        pass
    with contextlib.suppress(OSError):
        path.unlink()
    lockowner.remove_sidecar(path, content)
    return True


def _age(path: Path) -> float | None:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return None


# -- MEMORY.md ------------------------------------------------------------------------------------

class _MemoryHolder:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.depth = 0
        self.fd: int | None = None


_memory_holders: dict[str, _MemoryHolder] = {}


@contextlib.contextmanager
def memory_md_lock(workspace: Path, *, timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """Hold the lock guarding writes of the workspace's MEMORY.md (re-entrant in a thread).

    Every writer of MEMORY.md takes it around its read-modify-write or append, so a promotion
    that re-reads under it can never overwrite an append made under it. Raises
    LockTimeoutError when another writer holds it longer than `timeout`.
    """
    path = workspace_target(Path(workspace), MEMORY_LOCK_PATH)
    key = os.path.realpath(path)
    with _holders_guard:
        holder = _memory_holders.setdefault(key, _MemoryHolder())
    if not holder.lock.acquire(timeout=max(0.0, timeout)):
        raise LockTimeoutError(f"timed out after {timeout:g}s waiting for the MEMORY.md lock "
                               f"of {workspace} (held by this process)")
    try:
        if holder.depth == 0:
            make_dirs(Path(workspace), path.parent)
            holder.fd = _flock(path, timeout)
        holder.depth += 1
        try:
            yield
        finally:
            holder.depth -= 1
            if holder.depth == 0 and holder.fd is not None:
                os.close(holder.fd)  # closing the descriptor releases the flock
                holder.fd = None
    finally:
        holder.lock.release()


def _flock(path: Path, timeout: float) -> int | None:
    if not locks.HAS_FLOCK:  # pragma: no cover
        return None
    fd = locks.open_lock_file(path, nofollow=True)
    try:
        taken = locks.lock_within(fd, timeout, poll=0.002)
    except OSError:
        os.close(fd)
        raise
    if not taken:
        os.close(fd)
        raise LockTimeoutError(
            f"timed out after {timeout:g}s waiting for {path} (another process is "
            "writing MEMORY.md)")
    return fd
