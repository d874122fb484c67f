"""Editing another program's settings file without ever breaking it: read it whole, refuse it
when it does not parse (untouched), back it up before the first change, write atomically
(temp file + fsync + rename, its mode kept) and refuse when it changed since it was read."""

from __future__ import annotations

import difflib
import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from openmemd.errors import OpenmemdError

NEW_FILE_MODE = 0o600  # agents' settings hold tokens and paths: private unless already not


class EditError(OpenmemdError):
    """A settings file openmemd will not change (malformed, changed meanwhile, unwritable)."""

    code = "bad_request"


@dataclass(frozen=True)
class FileState:
    """A file as read: its bytes (None: it does not exist) and its permission bits."""

    path: Path
    data: bytes | None
    mode: int

    @property
    def exists(self) -> bool:
        return self.data is not None

    @property
    def text(self) -> str:
        try:
            return (self.data or b"").decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EditError(f"{self.path}: not UTF-8 ({exc.reason} at byte {exc.start}); "
                            "left untouched") from None

    @property
    def sha256(self) -> str | None:
        return None if self.data is None else hashlib.sha256(self.data).hexdigest()


def read_state(path: Path) -> FileState:
    try:
        data = path.read_bytes()
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return FileState(path, None, NEW_FILE_MODE)
    except OSError as exc:
        raise EditError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    return FileState(path, data, mode)


def unified_diff(before: FileState, after: bytes | None) -> str:
    old = before.text.splitlines(keepends=True)
    new = (after or b"").decode("utf-8").splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, str(before.path) if before.exists else "/dev/null",
                                 str(before.path) if after is not None else "/dev/null")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def backup(before: FileState) -> Path | None:
    """A copy of the file as it was, beside it, same mode (None: there was no file)."""
    if before.data is None:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = before.path.with_name(f"{before.path.name}.openmemd-backup-{stamp}")
    n = 1
    while target.exists():  # two runs in the same second keep both
        target = before.path.with_name(f"{before.path.name}.openmemd-backup-{stamp}-{n}")
        n += 1
    _write_temp_then(target, before.data, before.mode, expected=None, fresh=True)
    return target


def replace(before: FileState, after: bytes | None) -> None:
    """Make the file `after` (None: remove it), unless it changed since `before` was read."""
    if after is None:
        _unchanged_since(before)
        try:
            before.path.unlink()
        except FileNotFoundError:
            pass
        return
    before.path.parent.mkdir(parents=True, exist_ok=True)
    _write_temp_then(before.path, after, before.mode, expected=before, fresh=False)


def _write_temp_then(target: Path, data: bytes, mode: int, *, expected: FileState | None,
                     fresh: bool) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".openmemd-tmp",
                               dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        if expected is not None:
            _unchanged_since(expected)  # the last moment before the rename: a concurrent edit
        if fresh and target.exists():
            raise EditError(f"{target}: appeared while writing it; left as it is")
        os.replace(tmp, target)
    except OSError as exc:
        os.unlink(tmp)
        raise EditError(f"{target}: cannot write it: {exc.strerror or exc}; left untouched") \
            from None
    except BaseException:
        os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def _unchanged_since(before: FileState) -> None:
    now = read_state(before.path)
    if now.data != before.data:
        raise EditError(f"{before.path}: changed by another program while openmemd was "
                        "editing it; left as that program wrote it, run the command again")


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # not every platform opens directories; the rename is done all the same
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
