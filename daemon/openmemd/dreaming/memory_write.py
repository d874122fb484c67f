"""Apply a change to MEMORY.md as the file is *now*, without losing a concurrent edit.

A sweep plans its promotions from MEMORY.md as it was when the sweep started; the user (or an
agent's `memory_add`) may append to it meanwhile. So the write never uses that old copy:

1. Under `memory_md_lock`, read the file (and keep a descriptor on it) and build the new text
   from exactly that content (`build(current) -> new text, or None for "nothing to do"`).
2. Write it to a temp file beside MEMORY.md and fsync it; hard-link the current inode into the
   backup folder (so the backup *is* the content being replaced, byte for byte, including
   anything appended to it up to the rename).
3. Right before the rename, re-read and re-stat. Same inode and same bytes: rename. The file
   only grew (an appender outside the lock): copy the new tail into the temp file and check
   again. Replaced or rewritten (an editor's write-to-temp + rename, a truncation): start over
   from step 1. After `MAX_ATTEMPTS` a clear error; nothing has been written.
4. After the rename, bytes a lock-free appender still wrote into the old inode (it opened the
   file just before the rename) are read through the kept descriptor and appended to the new
   file.

kill -9 at any point leaves either the old or the new MEMORY.md (rename is atomic), at worst a
temp file that the next sweep removes (`leftovers.py`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from openmemd.errors import UnavailableError

from .clock import as_utc
from .layout import BACKUP_DIR, MEMORY_FILE
from .lockfile import memory_md_lock
from .markdown_io import fsync_dir, temp_prefix, workspace_target
from .modes import PRIVATE_MODE, make_dirs, new_file_mode

log = logging.getLogger("openmemd.dreaming")

MAX_ATTEMPTS = 50
_CATCH_UP_ROUNDS = 50


class MemoryFileBusyError(UnavailableError):
    """MEMORY.md kept being replaced while we tried to update it; nothing was written."""


class MemoryFileUnreadableError(UnavailableError):
    """MEMORY.md is not a readable UTF-8 file; we never rewrite what we cannot read."""


@dataclass(frozen=True)
class MemoryWrite:
    written: bool
    backup: Path | None  # the replaced content, or None (no file before, or backups off)
    before: str  # the content the change was applied to
    after: str


@dataclass
class _Snapshot:
    fd: int | None  # kept open on the inode we read (None: there was no file)
    ident: tuple[int, int] | None  # (st_dev, st_ino)
    data: bytes
    mode: int


def apply_to_memory(workspace: Path, build: Callable[[str], str | None], *, backups: int,
                    moment: datetime | None = None, sources: Iterable[str] = ()) -> MemoryWrite:
    """Replace MEMORY.md with `build(current text)`; see the module docstring. A new MEMORY.md
    is no more readable than the notes it receives (`sources`)."""
    ws = Path(workspace)
    path = workspace_target(ws, MEMORY_FILE)
    sources = tuple(sources)
    with memory_md_lock(ws):
        for attempt in range(1, MAX_ATTEMPTS + 1):
            snap = _read(path, lambda: new_file_mode(ws, sources))
            try:
                result = _attempt(ws, path, snap, build, backups, moment)
            finally:
                if snap.fd is not None:
                    os.close(snap.fd)
            if result is not None:
                if attempt > 1:
                    log.info("MEMORY.md changed during promotion; applied after %d attempts",
                             attempt)
                return result
        raise MemoryFileBusyError(
            f"{path} kept being replaced while the promotion was written ({MAX_ATTEMPTS} "
            "attempts); nothing was written, the candidates stay for the next sweep")


def _attempt(ws: Path, path: Path, snap: _Snapshot, build: Callable[[str], str | None],
             backups: int, moment: datetime | None) -> MemoryWrite | None:
    """One read-build-check-replace round; None when the file changed under us."""
    try:
        before = snap.data.decode("utf-8")
    except UnicodeDecodeError:
        raise MemoryFileUnreadableError(
            f"{path} is not valid UTF-8; promotion skipped, nothing was written") from None
    after = build(before)
    if after is None or after == before:
        return MemoryWrite(False, None, before, before)
    fd, tmp_name = tempfile.mkstemp(prefix=temp_prefix(MEMORY_FILE), suffix=".tmp",
                                    dir=path.parent)
    tmp = Path(tmp_name)
    backup: Path | None = None
    done = False
    try:
        os.write(fd, after.encode("utf-8"))
        os.fsync(fd)
        os.fchmod(fd, snap.mode)
        if snap.fd is not None and backups > 0:
            backup = _link_backup(ws, path, snap, moment)
        if _catch_up(path, snap, fd, backup):
            if snap.fd is None:
                os.link(tmp, path)  # create only if still absent: never clobber a new file
            else:
                os.replace(tmp, path)
            done = True
    except FileExistsError:
        pass  # MEMORY.md was created meanwhile: start over from it
    finally:
        os.close(fd)
        if not done:
            with contextlib.suppress(OSError):
                tmp.unlink()
            if backup is not None:
                with contextlib.suppress(OSError):
                    backup.unlink()
    if not done:
        return None
    if snap.fd is None:
        with contextlib.suppress(OSError):
            tmp.unlink()
    fsync_dir(path.parent)
    _salvage(path, snap, backup)
    if backup is not None:
        _finish_backup(backup, ws, backups)
    return MemoryWrite(True, backup, snap.data.decode("utf-8", errors="replace"), after)


def _read(path: Path, new_mode: Callable[[], int]) -> _Snapshot:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return _Snapshot(None, None, b"", new_mode())
    except OSError as exc:  # ELOOP: it became a symlink, which we never write through
        raise MemoryFileUnreadableError(
            f"{path} cannot be opened safely ({exc.strerror}); promotion skipped") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise MemoryFileUnreadableError(f"{path} is not a regular file; promotion skipped")
    return _Snapshot(fd, (info.st_dev, info.st_ino), _read_all(fd), stat.S_IMODE(info.st_mode))


def _read_all(fd: int, offset: int = 0) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _catch_up(path: Path, snap: _Snapshot, tmp_fd: int, backup: Path | None) -> bool:
    """True when `path` still holds the snapshot (plus appends copied into the temp file)."""
    for _ in range(_CATCH_UP_ROUNDS):
        try:
            info = path.lstat()
        except FileNotFoundError:
            return snap.fd is None
        if snap.fd is None or (info.st_dev, info.st_ino) != snap.ident \
                or not stat.S_ISREG(info.st_mode):
            return False  # created, or replaced by an editor's rename: rebuild from it
        current = _read_all(snap.fd)
        if current == snap.data:
            return True
        if not current.startswith(snap.data):
            return False  # rewritten in place: rebuild from it
        # Appended to while we worked: those lines go after our change, nothing is lost.
        tail = current[len(snap.data):]
        os.write(tmp_fd, tail)
        _extend_copy(backup, snap, tail)
        snap.data = current
    return False


def _extend_copy(backup: Path | None, snap: _Snapshot, tail: bytes) -> None:
    """A copied (not linked) backup must also hold bytes appended before the replace."""
    if backup is None:
        return
    with contextlib.suppress(OSError):
        info = backup.stat()
        if (info.st_dev, info.st_ino) != snap.ident:
            with open(backup, "ab") as handle:
                handle.write(tail)


def _salvage(path: Path, snap: _Snapshot, backup: Path | None) -> None:
    """Append what a writer put into the old inode after our last check."""
    if snap.fd is None:
        return
    tail = _read_all(snap.fd, len(snap.data))
    if not tail:
        return
    flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        os.write(fd, tail)
    finally:
        os.close(fd)
    snap.data += tail
    _extend_copy(backup, snap, tail)
    log.info("MEMORY.md: kept %d byte(s) appended during the replace", len(tail))


def _link_backup(ws: Path, path: Path, snap: _Snapshot, moment: datetime | None) -> Path:
    folder = workspace_target(ws, BACKUP_DIR)
    make_dirs(ws, folder.parent)
    folder.mkdir(mode=0o700, exist_ok=True)  # old versions of MEMORY.md: private
    stamp = as_utc(moment).strftime("%Y%m%dT%H%M%S.%fZ")
    target = folder / f"{path.name}.{stamp}"
    counter = 1
    while os.path.lexists(target):
        target = folder / f"{path.name}.{stamp}-{counter:02d}"
        counter += 1
    try:
        os.link(path, target)
        if (target.stat().st_dev, target.stat().st_ino) == snap.ident:
            return target
        target.unlink()  # the name pointed at another inode by then; copy what we read
    except OSError:
        pass  # another filesystem (or links not allowed): a copy of the bytes we read
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE)
    try:
        os.write(fd, snap.data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return target


def _finish_backup(backup: Path, ws: Path, keep: int) -> None:
    # The old inode now exists only as the backup: make it private, then prune old ones.
    with contextlib.suppress(OSError):
        os.chmod(backup, PRIVATE_MODE)
    prefix = f"{MEMORY_FILE}."
    folder = backup.parent
    olds = sorted(p for p in folder.iterdir()
                  if p.name.startswith(prefix) and not p.name.endswith(".tmp"))
    for old in olds[:-keep]:
        with contextlib.suppress(OSError):
            old.unlink()
