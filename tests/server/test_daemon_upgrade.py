"""openmemd upgraded or reinstalled under a running daemon (issue 25: `pip install -e .` while
the daemon ran made its next search fail with `ModuleNotFoundError: openmemd.search.pipeline`):
the daemon keeps answering with the code it started with, and `status` says to restart it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon_harness import Daemon, finds, make_daemon
from helpers import wait_for

SOURCE = Path(__file__).resolve().parents[2] / "daemon" / "openmemd"


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    yield from make_daemon()


def install_copy(d: Daemon) -> Path:
    """The package copied beside the daemon and put first on its path: ours to change."""
    site = d.root / "site"
    shutil.copytree(SOURCE, site / "openmemd", ignore=shutil.ignore_patterns("__pycache__"))
    d.env["PYTHONPATH"] = str(site)
    return site / "openmemd"


def upgrade_problems(d: Daemon) -> list[str]:
    with d.client() as c:
        return [p for p in c.status()["problems"] if "upgraded or reinstalled" in p]


def test_an_upgrade_under_the_daemon_is_reported_and_requests_still_work(
        daemon: Daemon) -> None:
    package = install_copy(daemon)
    (daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe codeword is pelican.\n")
    daemon.start()
    with daemon.client() as c:
        assert c.status()["running"] is True
    assert upgrade_problems(daemon) == []

    # What replacing the installed package does: modules gone, others rewritten. Nothing
    # has searched, added or dreamt yet.
    (package / "search" / "pipeline.py").unlink()
    (package / "dreaming" / "sweep.py").unlink()
    notes = package / "notes.py"
    notes.write_text(notes.read_text() + "\n# a newer version\n")

    assert wait_for(finds(daemon, "pelican", "MEMORY.md", []), 60), daemon.stop_and_logs()
    with daemon.client() as c:
        c.add("Searches still work after the upgrade.")
        assert c.dream(phase="all", dry_run=True)["result"]["dryRun"] is True

    assert wait_for(lambda: upgrade_problems(daemon) != [], 60, interval=0.2), \
        daemon.stop_and_logs()
    [problem] = upgrade_problems(daemon)
    assert str(package) in problem and "restart it" in problem
    assert "1 changed, 2 removed" in problem
    with daemon.client() as c:
        assert c.status()["health"] == "degraded"
    assert daemon.stop() == 0


def test_the_watch_names_added_files_and_keeps_the_problem(tmp_path: Path) -> None:
    from openmemd.server.install_watch import InstallWatch

    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    watch = InstallWatch(tmp_path, check_every_s=0)
    (tmp_path / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")  # Python's own
    assert watch.problems() == []
    (tmp_path / "b.py").write_text("y = 2\n")
    [problem] = watch.problems()
    assert "1 added, e.g. b.py" in problem
    (tmp_path / "b.py").unlink()  # once seen it stays (no coming and going while pip works)
    assert watch.problems() == [problem]
