"""The watcher says what it misses: a real kernel queue overflow, a real watch limit.

Overflow: the kernel's inotify queue is made tiny (fs.inotify.max_queued_events, read once
when an inotify instance is created, so it is lowered only while the watcher starts and
restored at once) and a burst of deletions from another process overflows it for real.

Watch limit: the daemon runs in its own user namespace whose inotify watch limit
(/proc/sys/user/max_inotify_watches, per user namespace) is lowered there, so the rest of the
machine (other tests running beside these) keeps its limits.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon_harness import Daemon, make_daemon
from helpers import wait_for
from openmemd.api import MemoryIndex
from openmemd.server.indexer import Indexer
from openmemd.server.watcher import Watcher

MAX_QUEUED = Path("/proc/sys/fs/inotify/max_queued_events")
USER_WATCHES = Path("/proc/sys/user/max_inotify_watches")


@contextlib.contextmanager
def tiny_inotify_queue(events: int) -> Iterator[None]:
    """Inotify instances created inside this block hold at most `events` queued events."""
    if not sys.platform.startswith("linux"):
        pytest.skip("inotify is Linux only")
    try:
        old = MAX_QUEUED.read_text()
        MAX_QUEUED.write_text(f"{events}\n")
    except OSError as exc:
        pytest.skip(f"cannot lower {MAX_QUEUED} here: {exc}")
    try:
        yield
    finally:
        MAX_QUEUED.write_text(old)


def test_kernel_queue_overflow_is_counted_and_deletions_converge(make_settings, workspace):
    notes = workspace / "memory"
    for i in range(300):
        (notes / f"note-{i:03d}.md").write_text(f"note {i} about overflow\n")
    settings = make_settings("[sync]\nreconcile_minutes = 0\n")
    with MemoryIndex.open(workspace, config=settings) as index:
        assert index.sync().indexed == 300
        indexer = Indexer(index, name="overflow")
        indexer.start()
        watcher = Watcher(workspace, index.is_indexed_path, indexer, debounce_ms=100)
        with tiny_inotify_queue(4):
            watcher.start()  # watchdog creates its inotify instance here
        try:
            assert watcher.state == "running"
            # Another process deletes faster than any reader drains a 4-event queue.
            subprocess.run(["find", str(notes), "-name", "*.md", "-delete"], check=True)
            assert wait_for(lambda: watcher.status().overflows >= 1, 20), watcher.status()
            # Only a reconcile can find the deletions whose events the kernel dropped.
            assert wait_for(lambda: index.status().files.indexed == 0, 20), \
                index.status().files
            assert indexer.reconciles >= 1
            assert "inotify queue overflow" in str(indexer.last_reconcile)
            assert watcher.status().last_overflow is not None
        finally:
            watcher.stop()
            indexer.stop()


# -- watch limit (real daemon in a user namespace) -----------------------------------------------

def _userns_prefix(watch_limit: int) -> list[str]:
    if not sys.platform.startswith("linux") or not USER_WATCHES.exists() \
            or shutil.which("unshare") is None:
        pytest.skip("needs Linux user namespaces (unshare, /proc/sys/user)")
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "sh", "-c",
                            f"echo 7 > {USER_WATCHES}"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot lower the watch limit in a user namespace: {probe.stderr.strip()}")
    return ["unshare", "--user", "--map-root-user", "sh", "-c",
            f'echo {watch_limit} > {USER_WATCHES} && exec "$@"', "sh"]


@pytest.fixture
def limited() -> Iterator[Daemon]:
    yield from make_daemon('[embedding]\nprovider = "none"\n[sync]\nwatch_debounce_ms = 100\n'
                           "watch_poll_seconds = 0.3\n")


def _watch(d: Daemon) -> dict:
    with d.client() as c:
        return c.status()["agents"]["main"]["watch"]


def _found(d: Daemon, query: str, path: str) -> bool:
    with d.client() as c:
        return path in {r["path"] for r in c.search(query, min_score=0.0)["results"]}


def test_watch_limit_falls_back_to_polling_and_says_so(limited: Daemon) -> None:
    d = limited
    for name in ("a", "b"):
        (d.workspace / "memory" / name).mkdir()
        (d.workspace / "memory" / name / "old.md").write_text(f"old note {name}\n")
    # Two watches: the workspace and memory/; memory/a and memory/b get none.
    prefix = _userns_prefix(2)
    d.proc = subprocess.Popen(prefix + d.args("run", "--foreground"), env=d.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert wait_for(d.ready, 60), d.stop_and_logs()

    assert wait_for(lambda: _watch(d)["pollingSubtrees"] == ["memory/a", "memory/b"], 20), \
        _watch(d)
    watch = _watch(d)
    assert watch["state"].startswith("degraded (polling memory/a")
    assert watch["watchFailures"] == 2
    with d.client() as c:
        status = c.status()
    assert status["health"] == "degraded"
    assert any("seen by polling" in p for p in status["problems"]), status["problems"]
    assert status["agents"]["main"]["watcher"] == watch["state"]

    # A change inside an unwatched subtree is still seen (by polling, not the 5-min reconcile).
    (d.workspace / "memory" / "b" / "new.md").write_text("the zebracorn migrated north\n")
    assert wait_for(lambda: _found(d, "zebracorn", "memory/b/new.md"), 30)
    # A directory created later cannot be watched either: it is polled too.
    (d.workspace / "memory" / "later").mkdir()
    (d.workspace / "memory" / "later" / "x.md").write_text("quokkaberry jam recipe\n")
    assert wait_for(lambda: _found(d, "quokkaberry", "memory/later/x.md"), 30)
    assert wait_for(lambda: "memory/later" in _watch(d)["pollingSubtrees"], 20)
    (d.workspace / "memory" / "later" / "y.md").write_text("a second kiwiplum note\n")
    assert wait_for(lambda: _found(d, "kiwiplum", "memory/later/y.md"), 30)

    out = d.cli("status")
    assert "Watcher: degraded (polling memory/a, memory/b, memory/later)" in out.stdout, out
    assert "3 unwatchable directories, polled" in out.stdout
    assert d.stop() == 0


def test_a_directory_is_polled_only_when_two_looks_apart_both_miss_its_watch() -> None:
    # watchdog adds a new directory's watch from its own thread: a look right after the
    # directory appears may miss it. Polling it for good made a healthy daemon 'degraded
    # (polling memory/dreaming/rem)' (seen in CI).
    from openmemd.server.watch_limits import UnwatchedConfirmer

    looks = UnwatchedConfirmer(grace=1.0)
    assert looks.confirm(["memory/new"], whole_tree=False, now=100.0) == []
    assert looks.confirm([], whole_tree=True, now=100.5) == []  # watched after all: forgotten
    assert looks.confirm(["memory/new"], whole_tree=True, now=101.6) == []  # a fresh miss
    assert looks.confirm(["memory/new"], whole_tree=True, now=102.7) == ["memory/new"]
    assert looks.confirm(["memory/new", "memory/b"], whole_tree=False, now=102.8) == [
        "memory/new"]


def test_the_whole_tree_is_looked_at_only_when_something_may_have_changed() -> None:
    # A look walks every directory of the workspace; the daemon checks every 5 s, and a walk
    # of every check cost 2-3 % CPU on an idle daemon over the tldr pages.
    from openmemd.server.watch_limits import UnwatchedConfirmer

    looks = UnwatchedConfirmer(grace=1.0, full_every=300.0)
    assert looks.full_look_due(0.0)  # start-up
    looks.confirm([], whole_tree=True, now=0.0)
    assert not looks.full_look_due(5.0)  # all watched: nothing to look at
    assert looks.confirm(["memory/new"], whole_tree=False, now=6.0) == []  # a new dir's miss
    assert looks.full_look_due(10.0)  # ... waits for its second look
    assert looks.confirm(["memory/new"], whole_tree=True, now=10.0) == ["memory/new"]
    assert not looks.full_look_due(15.0)  # confirmed (and polled from now on)
    looks.want_full_look()  # a queue overflow
    assert looks.full_look_due(16.0)
    looks.confirm(["memory/new"], whole_tree=True, now=16.0)
    assert not looks.full_look_due(20.0)
    assert looks.full_look_due(316.0)  # the safety net
