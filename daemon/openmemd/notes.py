"""Appending a note to the memory (`memory_add`, the `add` op, `openmemd add`).

A note is one Markdown bullet appended to today's `memory/YYYY-MM-DD.md` (day in the dreaming
timezone, local by default) or to `MEMORY.md`. The file is only ever appended to: one `write`
on an `O_APPEND` descriptor, never a rewrite, so an editor or OpenClaw writing the same file
loses nothing. The append runs under the lock dreaming holds while it rewrites MEMORY.md, so a
promotion (read, compose, replace) can never drop a note added meanwhile. The lines a reply
cites are counted up to where the kernel put the bytes, so they are right even when a writer
outside the lock (an editor, OpenClaw, a shell) appends at the same moment.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from openmemd.dreaming.clock import day_bucket, resolve_timezone
from openmemd.dreaming.lockfile import memory_md_lock
from openmemd.dreaming.markdown_io import workspace_target
from openmemd.dreaming.memory_md import NEW_FILE_HEADER
from openmemd.dreaming.modes import make_dirs, new_file_mode
from openmemd.errors import BadRequestError, UnavailableError
from openmemd.log import get_logger
from openmemd.protocol.params import MAX_NOTE_BYTES
from openmemd.protocol.params import NOTE_TARGETS as TARGETS
from openmemd.search.snippets import citation

log = get_logger(__name__)

LONG_TERM_FILE = "MEMORY.md"


@dataclass(frozen=True)
class AddedNote:
    path: str  # workspace-relative, POSIX
    start_line: int
    end_line: int

    @property
    def citation(self) -> str:
        return citation(self.path, self.start_line, self.end_line)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "startLine": self.start_line, "endLine": self.end_line,
                "citation": self.citation}


def check_note(text: Any, target: Any) -> str:
    """The note's text, or BadRequestError saying what is wrong with the request."""
    if target not in TARGETS:
        raise BadRequestError(f"target must be one of {', '.join(TARGETS)}; got {target!r:.40}")
    if not isinstance(text, str):
        raise BadRequestError("text must be a string")
    if "\x00" in text:
        raise BadRequestError("text must not contain NUL characters")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_NOTE_BYTES:
        raise BadRequestError(f"text is {size} bytes; a note is at most {MAX_NOTE_BYTES} bytes "
                              "(UTF-8)")
    note: str = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not note:
        raise BadRequestError("text must not be empty")
    try:
        note.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequestError("text is not valid Unicode (lone surrogate)") from None
    return note


def bullet_lines(text: str) -> list[str]:
    """One bullet: continuation lines indented so they stay inside it (blank lines kept)."""
    first, *rest = text.split("\n")
    return [f"- {first.rstrip()}"] + [f"  {line.rstrip()}" if line.strip() else ""
                                      for line in rest]


def target_path(target: str, tz_name: str = "", now: datetime | None = None) -> str:
    if target == "long-term":
        return LONG_TERM_FILE
    day = day_bucket(now or datetime.now().astimezone(), resolve_timezone(tz_name))
    return f"memory/{day}.md"


def append_note(workspace: Path, text: Any, target: Any = "daily", *, tz_name: str = "",
                now: datetime | None = None) -> AddedNote:
    """Append `text` as one bullet; return where it landed. Nothing is written on error."""
    text = check_note(text, target)
    rel = target_path(target, tz_name, now)
    workspace = Path(workspace)
    with memory_md_lock(workspace):
        path = workspace_target(workspace, rel)  # refuses a symlinked file or directory
        make_dirs(workspace, path.parent)
        workspace_target(workspace, rel)  # the directory we may just have made is not a link
        with _open_append(path, new_file_mode(workspace)) as (fd, created):
            size = os.fstat(fd).st_size
            if size == 0:
                head = (f"# {Path(rel).stem}\n\n" if target == "daily" else NEW_FILE_HEADER)
            else:
                head = "" if os.pread(fd, 1, size - 1) == b"\n" else "\n"
            lines = bullet_lines(text)
            try:
                landed = _write_once(fd, (head + "\n".join(lines) + "\n").encode("utf-8"))
            except UnavailableError:
                if created:
                    _remove_if_empty(path, fd)  # a full disk leaves no empty daily note
                raise
            # Counted up to where the bytes really went: a writer outside our lock (an editor,
            # OpenClaw, a shell's >>) may have appended between the stat and the write.
            start = _count_newlines(fd, landed) + head.count("\n") + 1
        if created:
            _fsync_dir(path.parent)
    note = AddedNote(rel, start, start + len(lines) - 1)
    log.info("note_added", path=rel, start_line=note.start_line, end_line=note.end_line)
    return note


@contextlib.contextmanager
def _open_append(path: Path, mode: int) -> Iterator[tuple[int, bool]]:
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    existed = os.path.lexists(path)
    try:
        fd = os.open(path, flags, mode)
    except OSError as exc:
        raise UnavailableError(f"cannot open {path.name} to add the note: {exc.strerror}") \
            from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BadRequestError(f"{path.name} is not a regular file")
        yield fd, not existed
    finally:
        os.close(fd)


def _count_newlines(fd: int, size: int) -> int:
    """The number of newlines in the file's first `size` bytes."""
    count, offset = 0, 0
    while offset < size:
        block = os.pread(fd, min(1 << 20, size - offset), offset)
        if not block:
            break
        count += block.count(b"\n")
        offset += len(block)
    return count


def _write_once(fd: int, data: bytes) -> int:
    """One O_APPEND write, then fsync; the offset the bytes landed at. The kernel picks that
    offset (the end of the file at that instant) and moves the descriptor's offset past what
    it wrote, so it is known even when another process appended just before. A short write
    (disk full) is taken back when the file ends with our bytes, so no half bullet is left."""
    try:
        written = os.write(fd, data)
        landed = os.lseek(fd, 0, os.SEEK_CUR) - written
        if written == len(data):
            try:
                os.fsync(fd)
            except OSError as exc:  # written in full; reporting failure would invite a retry
                log.warning("note_fsync_failed", error=str(exc))
            return landed
        reason = "disk full"
    except OSError as exc:
        written, landed, reason = 0, 0, exc.strerror or str(exc)
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG):
            raise UnavailableError(f"the note was not written: {reason}") from None
    with contextlib.suppress(OSError):
        if written and os.fstat(fd).st_size == landed + written:
            os.ftruncate(fd, landed)
    raise UnavailableError(f"the note was not written: {reason}")


def _remove_if_empty(path: Path, fd: int) -> None:
    """Remove the file we just created when it is still ours and empty (we hold the lock, but
    an editor may have written into it or put another file in its place meanwhile)."""
    with contextlib.suppress(OSError):
        mine, there = os.fstat(fd), path.lstat()
        if mine.st_size == 0 and (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino):
            path.unlink()


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
