"""One daemon per endpoint: the flock-held pid lock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from openmemd.server.lock import AlreadyRunning, PidLock


def test_second_holder_is_refused_with_the_pid(tmp_path: Path) -> None:
    first = PidLock(tmp_path / "d.lock")
    first.acquire()
    try:
        assert (tmp_path / "d.lock").read_text().strip() == str(os.getpid())
        with pytest.raises(AlreadyRunning) as info:
            PidLock(tmp_path / "d.lock").acquire("on ipc:///x")
        assert info.value.pid == os.getpid()
        assert f"pid {os.getpid()}" in str(info.value) and "ipc:///x" in str(info.value)
    finally:
        first.release()
    assert (tmp_path / "d.lock").read_text() == ""  # the pid goes with the lock
    with PidLock(tmp_path / "d.lock"):  # free again after release
        assert (tmp_path / "d.lock").read_text().strip() == str(os.getpid())


def test_stale_lock_from_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "d.lock"
    # A process that takes the lock and dies without releasing it (kill -9 style).
    code = (f"import os; from openmemd.server.lock import PidLock; "
            f"PidLock({str(path)!r}).acquire(); os._exit(0)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert path.read_text().strip().isdigit()  # its pid is still in the file
    lock = PidLock(path)
    lock.acquire()
    try:
        assert path.read_text().strip() == str(os.getpid())
    finally:
        lock.release()


def test_lock_held_by_another_process(tmp_path: Path) -> None:
    path = tmp_path / "d.lock"
    code = (f"import sys, time; from openmemd.server.lock import PidLock; "
            f"PidLock({str(path)!r}).acquire(); print('locked', flush=True); "
            f"sys.stdin.readline()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        with pytest.raises(AlreadyRunning) as info:
            PidLock(path).acquire()
        assert info.value.pid == proc.pid
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(30)
