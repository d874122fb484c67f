"""Small helpers shared by the tests (fixtures live in conftest.py)."""

from __future__ import annotations

import io
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def wait_for(pred: Callable[[], bool], timeout: float = 15.0, interval: float = 0.02) -> bool:
    """Poll `pred` until it is true or `timeout` passes; the result says which.

    Tests assert on the outcome, never on how long it took.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return pred()


def mount_tmpfs(target: Path, size: str) -> str:
    """Mount a tmpfs of `size` on `target` (a full disk, for real); "" or why it cannot."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return "needs root and mount(8) to make a small filesystem"
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)],
                          capture_output=True, text=True)
    return "" if done.returncode == 0 else f"cannot mount a tmpfs here: {done.stderr.strip()}"


def fill_filesystem(path: Path) -> None:
    """Write `path` until the filesystem has not one block left."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 16, 4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)


@contextmanager
def logged(fmt: str = "json") -> Iterator[io.StringIO]:
    """openmemd's logging set up as `fmt` on a string buffer (yielded), the root logger's
    handlers and level as they were afterwards."""
    from openmemd.log import configure_logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    out = io.StringIO()
    configure_logging(force_format=fmt, stream=out)
    try:
        yield out
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
