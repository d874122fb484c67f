"""An index file SQLite may not open is not damage: what it is, said in one line with the fix,
the file kept (store/sqlite/index_file.py); and doctor's read-only look at the file
(store/sqlite/examine.py). The permission cases as root are in tests/cli/test_broken_index.py
(a subprocess without CAP_DAC_OVERRIDE); the error -> message mapping is tested here whoever
runs it."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from openmemd.store.base import IndexUnusableError
from openmemd.store.sqlite import db, examine, index_file, recovery


def finishes(fn: Callable[[], object], timeout: float = 5.0) -> object:
    """`fn()`'s result or exception, failing the test instead of hanging it (a FIFO opened
    blocks until a writer comes)."""
    out: list[object] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as exc:
            out.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert out, f"still blocked after {timeout} s"
    return out[0]


@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM])
def test_a_permission_error_is_said_as_one_with_its_fix(tmp_path, code):
    path = tmp_path / "memory" / "main.sqlite"
    found = index_file.from_os_error(PermissionError(code, os.strerror(code), str(path)), path,
                                     write=False)
    assert found.message == (f"the index {path} cannot be read: {os.strerror(code).lower()} "
                             "(a permission problem, not damage: the file is kept)")
    assert found.fix == (f"chown $USER {path} && chmod 600 {path} "
                         f"(and chmod 700 {path.parent})")
    error = found.error()
    assert isinstance(error, IndexUnusableError) and "\n" not in str(error)
    assert str(error).endswith(f"; fix: {found.fix}")


def test_a_state_dir_that_is_a_file_is_named(tmp_path):
    state = tmp_path / "state"
    state.write_text("not a folder")
    path = state / "memory" / "main.sqlite"
    expected = (f"{state} is a regular file, not a directory: the index {path} cannot be kept "
                "under it")
    assert index_file.location_problem(path) == index_file.FileProblem(
        expected, f"move {state} aside (mv {state} {state}.bak), or set state_dir to a "
        "directory")
    mapped = index_file.from_os_error(NotADirectoryError(errno.ENOTDIR, "Not a directory"),
                                      path, write=True)
    assert mapped.message == expected


def test_other_os_errors_say_the_reason(tmp_path):
    path = tmp_path / "main.sqlite"
    found = index_file.from_os_error(OSError(errno.ELOOP, "Too many levels of symbolic links"),
                                     path, write=False)
    assert found.message == f"the index {path} cannot be opened: too many levels of symbolic " \
                            "links"


def test_a_fifo_is_refused_without_being_opened(tmp_path):
    path = tmp_path / "main.sqlite"
    os.mkfifo(path)
    result = finishes(lambda: db.connect(path, readonly=True))
    assert isinstance(result, IndexUnusableError), result
    assert str(result) == (f"{path} is a FIFO (named pipe), not an index file (refused, never "
                           f"opened); fix: move it away (mv {path} {path}.bak): the next index "
                           "or search builds a new one")
    assert isinstance(finishes(lambda: db.connect(path)), IndexUnusableError)  # the writer's
    assert isinstance(finishes(lambda: recovery.open_writer(path)), IndexUnusableError)
    assert path.is_fifo() and os.listdir(tmp_path) == ["main.sqlite"]  # nothing moved aside


def test_a_folder_in_the_files_place_is_not_damage(tmp_path):
    path = tmp_path / "main.sqlite"
    path.mkdir()
    with pytest.raises(IndexUnusableError, match="is a folder, not an index file"):
        recovery.open_writer(path)
    with pytest.raises(IndexUnusableError):  # a heal would move it aside: it is refused too
        recovery.replace_damaged(path, "unable to open database file", None)
    assert path.is_dir() and os.listdir(tmp_path) == ["main.sqlite"]
    assert recovery.confirm_damage(path) == ""  # a reader's failure is not confirmed as damage


@pytest.mark.parametrize(("head", "size", "says"), [
    (b"", 0, "0 bytes (truncated"),
    (b"\x8f\x00garbage" * 20, 4096, "not a SQLite database"),
    (b"SQLite fo", 9, "truncated to 9 bytes"),
    (b"SQLite format 3\x00" + bytes(84), 4096, ""),
])
def test_the_first_bytes_tell_garbage_and_truncation(head, size, says):
    problem, fix = examine.content_problem(head, size)
    assert problem.startswith(says) if says else (problem, fix) == ("", "")
    assert bool(fix) == bool(says)


def _sound_index(path: Path) -> None:
    recovery.open_writer(path).conn.close()


def test_examine_a_sound_index_writes_nothing(tmp_path):
    path = tmp_path / "main.sqlite"
    _sound_index(path)
    before = sorted(os.listdir(tmp_path))
    found = examine.examine(path)
    assert not found.problem and found.detail.endswith("0 chunks, sound (schema and "
                                                       "quick_check)"), found
    assert sorted(os.listdir(tmp_path)) == before  # no -wal nor -shm left by a look


@pytest.mark.parametrize(("damage", "says"), [
    (lambda p: p.write_bytes(os.urandom(8192)), "is damaged: not a SQLite database"),
    (lambda p: p.write_bytes(b""), "is damaged: 0 bytes"),
    (lambda p: p.write_bytes(p.read_bytes()[:4096]), "is damaged: "),
])
def test_examine_says_what_is_wrong_and_renames_nothing(tmp_path, damage, says):
    path = tmp_path / "main.sqlite"
    _sound_index(path)
    damage(path)
    kept = path.read_bytes()
    found = examine.examine(path)
    assert found.fatal and found.problem.startswith(f"{path} {says}"), found
    assert found.fix.startswith("openmemd index ")
    assert path.read_bytes() == kept and os.listdir(tmp_path) == ["main.sqlite"]


def test_examine_a_missing_index_is_fine(tmp_path):
    found = examine.examine(tmp_path / "main.sqlite")
    assert not found.problem and "not created yet" in found.detail


def test_unable_to_open_is_damage_only_when_the_file_itself_opens(tmp_path):
    """SQLite's "unable to open database file" met mid-run: damage (healed) for a missing
    file, the file's own problem (kept) for a FIFO or anything else it may not open."""
    from openmemd.store.base import IndexDamagedError
    from openmemd.store.sqlite.boundary import translate

    exc = db.OperationalError("unable to open database file")
    path = tmp_path / "main.sqlite"
    assert isinstance(translate(exc, path), IndexDamagedError)
    os.mkfifo(path)
    error = translate(exc, path)
    assert isinstance(error, IndexUnusableError) and "is a FIFO" in str(error)
