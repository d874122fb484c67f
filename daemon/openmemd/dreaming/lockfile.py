"""The single-writer lock on a workspace's recall store, shared with OpenClaw.

Two layers, like OpenClaw: an in-process lock (so threads of one daemon queue up) and the lock
file `memory/.dreams/short-term-promotion.lock`, created exclusively with `<pid>:<epochMs>`, so
OpenClaw and openmemd never interleave read-modify-write cycles on the same store. A lock file
older than 60 s whose owner is dead (or whose content is unreadable) is stale and taken over;
otherwise we retry every 40 ms until the timeout. The lock is re-entrant within a thread.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from openmemd.errors import UnavailableError

from .layout import LOCK_PATH
from .markdown_io import workspace_target

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
    path.parent.mkdir(parents=True, exist_ok=True)
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


def _steal_if_stale(path: Path) -> bool:
    """Remove a stale lock file; True if the caller should retry at once."""
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return True  # released between our open and stat
    except OSError:
        return False
    if age <= STALE_SECONDS:
        return False
    try:
        owner = _parse_owner(path.read_text(encoding="utf-8"))
    except OSError:
        owner = None
    if owner is not None and _process_alive(owner):
        return False
    with contextlib.suppress(OSError):
        path.unlink()
    return True


def _parse_owner(content: str) -> int | None:
    head, sep, _ = content.strip().partition(":")
    if not sep or not head.isdigit():
        return None
    pid = int(head)
    return pid if pid > 0 else None


def _process_alive(pid: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - os.kill(pid, 0) would terminate it there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # EPERM and friends: it exists, it is just not ours
    return True
