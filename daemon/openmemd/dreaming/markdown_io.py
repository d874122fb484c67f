"""File I/O for dreaming: workspace-confined reads, atomic writes, backups, JSON lines.

Everything dreaming writes goes through `atomic_write_text`: a temp file in the same directory,
fsync, then `os.replace`, so a reader (the indexer, OpenClaw, an editor) sees either the old or
the new file and never half of one. Writes never go through a symlink: a symlinked target or
parent directory inside the workspace could redirect the write anywhere on disk. New files and
folders get their modes from `modes.py` (never more readable than what they quote).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from openmemd.errors import ForbiddenError

from .layout import is_safe_relative
from .modes import FILE_MODE, PRIVATE_MODE, make_dirs, new_file_mode


class UnsafePathError(ForbiddenError):
    """A dreaming target is a symlink or lies outside the workspace; nothing was written."""


def workspace_target(workspace: Path, rel: str) -> Path:
    """The absolute path of `rel` in `workspace`, refusing symlinks on the way.

    Every existing component below the workspace root is checked with lstat, so neither the
    file itself nor a parent directory can be a link.
    """
    if not is_safe_relative(rel):
        raise UnsafePathError(f"{rel!r} is not a path inside the workspace")
    current = Path(workspace)
    for part in PurePosixPath(rel).parts:
        current = current / part
        try:
            info = current.lstat()
        except FileNotFoundError:
            break  # the rest does not exist yet, so it cannot be a link
        if stat.S_ISLNK(info.st_mode):
            raise UnsafePathError(f"refusing to use {rel}: {current} is a symlink")
    return Path(workspace) / rel


def read_text(workspace: Path, rel: str, *, strict: bool = False) -> str | None:
    """The text of a regular file inside the workspace; None if missing, a link or unreadable.

    `strict`: None also when the file is not valid UTF-8 (for files we will rewrite, where a
    replacement character would silently damage the user's bytes).
    """
    try:
        path = workspace_target(workspace, rel)
    except UnsafePathError:
        return None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        data = handle.read()
    try:
        return data.decode("utf-8", errors="strict" if strict else "replace")
    except UnicodeDecodeError:
        return None


def atomic_write_text(workspace: Path, rel: str, text: str, *, sources: Iterable[str] = (),
                      default_mode: int = FILE_MODE) -> Path:
    """Replace `rel` in `workspace` with `text` atomically, keeping the mode of the file it
    replaces; a new file gets `modes.new_file_mode` for what it quotes (`sources`)."""
    path = workspace_target(workspace, rel)
    try:
        mode = stat.S_IMODE(path.lstat().st_mode)
    except FileNotFoundError:
        mode = new_file_mode(workspace, sources, default=default_mode)
    make_dirs(workspace, path.parent)
    workspace_target(workspace, rel)  # a folder made meanwhile is not a link either
    _replace_atomically(path, text.encode("utf-8"), mode)
    return path


TEMP_MARK = ".openmemd-"  # in every temp file name we create, so leftovers are surely ours


def temp_prefix(name: str) -> str:
    """Prefix of our temp files beside `name` (`.<name>.openmemd-<random>.tmp`)."""
    return f".{name}{TEMP_MARK}"


def _replace_atomically(path: Path, data: bytes, mode: int) -> None:
    """Write `data` to a temp file beside `path`, fsync it, rename it over `path`."""
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path.name), suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def write_json(workspace: Path, rel: str, data: Mapping[str, Any]) -> None:
    """Pretty JSON with a trailing newline, the layout OpenClaw writes its state files in
    (0600 when new, like OpenClaw's)."""
    atomic_write_text(workspace, rel, dumps_json(data), default_mode=PRIVATE_MODE)


def dumps_json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def append_lines(workspace: Path, rel: str, lines: Iterable[str], *, rotate_bytes: int) -> None:
    """Append text lines (to a private file); past `rotate_bytes` the file is first moved to
    `<name>.1`.

    The event journal gets a line per search; rotation keeps it from growing for ever.
    """
    payload = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if not payload:
        return
    path = workspace_target(workspace, rel)
    make_dirs(workspace, path.parent)
    with contextlib.suppress(FileNotFoundError):
        if rotate_bytes > 0 and path.stat().st_size >= rotate_bytes:
            os.replace(path, path.with_name(path.name + ".1"))
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, PRIVATE_MODE)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(payload)


def fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable on POSIX; Windows cannot open directories.
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
