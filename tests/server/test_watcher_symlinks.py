"""A symlinked folder inside memory/ (pointing inside the workspace or out of it) leaves the
real watcher healthy and is never followed, natively or when polling (DESIGN)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_watcher import Sink, indexed, settle

from helpers import wait_for
from openmemd.server.watch_limits import unwatched_dirs
from openmemd.server.watcher import STATE_RUNNING, Watcher


@pytest.fixture
def linked(tmp_path: Path) -> Iterator[Path]:
    """A workspace whose memory/ holds a real folder, a link to it and a link outside."""
    d = Path(tempfile.mkdtemp(dir="/tmp", prefix="oml"))
    ws = d / "ws"
    (ws / "memory" / "real").mkdir(parents=True)
    (d / "outside").mkdir()
    (ws / "memory" / "inside-link").symlink_to(ws / "memory" / "real", target_is_directory=True)
    (ws / "memory" / "outside-link").symlink_to(d / "outside", target_is_directory=True)
    yield ws
    shutil.rmtree(d, ignore_errors=True)


def test_symlinked_folders_are_not_missing_watches(linked: Path) -> None:
    sink = Sink()
    w = Watcher(linked, indexed, sink, debounce_ms=100, polling_interval=0.2)
    w.start()
    try:
        assert w.status().backend == "inotify"
        root = str(linked)

        def relative(path: str) -> str:
            return path[len(root) + 1:] if path != root else ""

        # Read from the kernel's own list of watches: the links have none and need none.
        assert unwatched_dirs(root, root, lambda rel: True, relative) == []
        deadline = time.monotonic() + 3  # the watcher looks twice, a second apart, first
        while time.monotonic() < deadline:
            w.check()
            assert w.state == STATE_RUNNING, w.status()
            time.sleep(0.1)
        assert w.status().polling_subtrees == () and w.status().watch_failures == 0
    finally:
        w.stop()


@pytest.mark.parametrize("force_polling", [False, True], ids=["inotify", "polling"])
def test_a_symlinked_folder_is_never_followed(linked: Path, force_polling: bool) -> None:
    sink = Sink()
    w = Watcher(linked, indexed, sink, debounce_ms=100, force_polling=force_polling,
                polling_interval=0.2)
    w.start()
    try:
        for _ in range(3):  # past the watcher's second look at the tree
            w.check()
            time.sleep(0.5)
        (linked.parent / "outside" / "leak.md").write_text("outside the workspace\n")
        (linked / "memory" / "real" / "note.md").write_text("inside\n")
        assert wait_for(lambda: "memory/real/note.md" in sink.last())
        settle(sink)
        assert set(sink.last()) == {"memory/real/note.md"}  # not via either link
    finally:
        w.stop()
