"""State files (indexes with their -wal/-shm, lock, rebuild temp files) are 0600 in 0700
directories, whoever creates them and whatever the umask, and looser ones are tightened."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon_harness import Daemon, make_daemon
from helpers import wait_for


@pytest.fixture
def loose_umask() -> Iterator[None]:
    old = os.umask(0o022)  # what most users have: files 0644, directories 0755
    try:
        yield
    finally:
        os.umask(old)


def loose_entries(root: Path) -> list[str]:
    """Everything under `root` (and root itself) that is not 0700 (directory) or 0600 (file)."""
    bad = []
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(os.lstat(path).st_mode)
        want = 0o700 if path.is_dir() else 0o600
        if mode != want:
            bad.append(f"{path.relative_to(root.parent)} {oct(mode)}")
    return bad


def cli(tmp_path: Path, workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.toml"
    config.write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMEMD_")}
    env["OPENMEMD_ENDPOINT"] = f"ipc://{tmp_path}/none.sock"  # no daemon: work in process
    return subprocess.run([sys.executable, "-m", "openmemd", *args, "--config", str(config),
                           "--workspace", str(workspace), "--state-dir",
                           str(tmp_path / "state")], env=env, capture_output=True, text=True,
                          timeout=120)


def test_cli_index_creates_private_state(tmp_path, workspace, loose_umask):
    (workspace / "MEMORY.md").write_text("The kestrel nests on the roof.\n")
    done = cli(tmp_path, workspace, "index")
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "state").rglob("*.sqlite"))
    assert loose_entries(tmp_path / "state") == []
    done = cli(tmp_path, workspace, "index", "--force")  # the rebuild's temp index too
    assert done.returncode == 0, done.stderr
    assert loose_entries(tmp_path / "state") == []


def test_loose_existing_state_is_tightened_on_open(tmp_path, workspace, loose_umask):
    (workspace / "MEMORY.md").write_text("The kestrel nests on the roof.\n")
    assert cli(tmp_path, workspace, "index").returncode == 0
    state = tmp_path / "state"
    for path in [state, *state.rglob("*")]:  # as an older openmemd left them
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    assert loose_entries(state / "memory")
    done = cli(tmp_path, workspace, "search", "kestrel")
    assert done.returncode == 0 and "MEMORY.md" in done.stdout, done.stderr
    assert loose_entries(state / "memory") == []
    # a state_dir the user chose (not the platform default) is theirs: never chmod-ed
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o755


def test_daemon_creates_private_state(loose_umask):
    gen = make_daemon()
    d: Daemon = next(gen)
    try:
        (d.workspace / "MEMORY.md").write_text("The kestrel nests on the roof.\n")
        d.start()

        def searchable() -> bool:
            with d.client() as c:
                return bool(c.search("kestrel", min_score=0.0)["results"])

        assert wait_for(searchable, 30), d.stop_and_logs()
        state = d.root / "state"
        assert list(state.rglob("*.sqlite-wal"))  # the daemon's WAL sidecars are covered
        assert loose_entries(state) == []
        assert d.stop() == 0
    finally:
        gen.close()


def test_loose_default_state_dir_is_tightened(tmp_path, workspace, loose_umask):
    (workspace / "MEMORY.md").write_text("The kestrel nests on the roof.\n")
    default_state = tmp_path / "xdg-state" / "openmemd"
    default_state.mkdir(parents=True, mode=0o755)
    config = tmp_path / "config.toml"
    config.write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMEMD_")}
    env.update(XDG_STATE_HOME=str(tmp_path / "xdg-state"),
               OPENMEMD_ENDPOINT=f"ipc://{tmp_path}/none.sock")
    done = subprocess.run([sys.executable, "-m", "openmemd", "index", "--config", str(config),
                           "--workspace", str(workspace)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert list(default_state.rglob("*.sqlite"))
    assert loose_entries(default_state) == []
