"""A killed sweep neither blocks the next one nor leaves temp files for good (issue 9, 2-3)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from openmemd.config import DreamingSettings
from openmemd.dreaming import LockTimeoutError, run_sweep
from openmemd.dreaming.lockfile import store_lock
from openmemd.dreaming.lockowner import host_id

LOCK = "memory/.dreams/short-term-promotion.lock"
NOW = datetime(2026, 4, 6, 10, 0, tzinfo=timezone.utc)

_HOLDER = """
import sys, time
from pathlib import Path
from openmemd.dreaming.lockfile import store_lock
with store_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(600)
"""


def ws_with_note(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory/2026-04-06.md").write_text("- a note\n", encoding="utf-8")
    return ws


def hold_lock(ws: Path) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", _HOLDER, str(ws)], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def test_lock_of_a_killed_sweep_is_taken_over_at_once(tmp_path: Path) -> None:
    ws = ws_with_note(tmp_path)
    child = hold_lock(ws)
    child.kill()
    child.wait(10)
    assert (ws / LOCK).read_text().startswith(f"{child.pid}:")  # left behind by kill -9
    # Far below the 60 s age rule: the dead owner is recognised, not waited out.
    with store_lock(ws, timeout=1.0):
        assert (ws / LOCK).read_text().startswith(f"{os.getpid()}:")
    assert not (ws / LOCK).exists() and not (ws / (LOCK + ".owner")).exists()
    assert run_sweep(ws, DreamingSettings(timezone="UTC"), now=NOW).phases


def test_lock_of_a_live_process_is_respected(tmp_path: Path) -> None:
    ws = ws_with_note(tmp_path)
    child = hold_lock(ws)
    try:
        with pytest.raises(LockTimeoutError, match="writing the recall store"), \
                store_lock(ws, timeout=0.3):
            pass
    finally:
        child.kill()
        child.wait(10)


def test_lock_whose_pid_was_reused_is_taken_over(tmp_path: Path) -> None:
    ws = ws_with_note(tmp_path)
    (ws / "memory/.dreams").mkdir()
    # The pid is alive, but the process behind it started long after the lock was taken.
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        token = f"{other.pid}:{int((time.time() - 3600) * 1000)}\n"
        (ws / LOCK).write_text(token)
        (ws / (LOCK + ".owner")).write_text(f"{token}{host_id()}\n")
        with store_lock(ws, timeout=1.0):
            assert (ws / LOCK).read_text().startswith(f"{os.getpid()}:")
    finally:
        other.kill()
        other.wait(10)


@pytest.mark.parametrize("sidecar", ["none", "other-host"])
def test_lock_we_cannot_judge_keeps_the_age_rule(tmp_path: Path, sidecar: str) -> None:
    # OpenClaw's lock (no sidecar) or one from another host/container: its pid means nothing
    # here, so a fresh one is waited for even if that pid is free on this machine.
    ws = ws_with_note(tmp_path)
    (ws / "memory/.dreams").mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(10)
    token = f"{dead.pid}:{int(time.time() * 1000)}\n"
    (ws / LOCK).write_text(token)
    if sidecar == "other-host":
        (ws / (LOCK + ".owner")).write_text(f"{token}another-host some-boot pid:[1]\n")
    with pytest.raises(LockTimeoutError), store_lock(ws, timeout=0.3):
        pass
    old = time.time() - 120
    os.utime(ws / LOCK, (old, old))
    with store_lock(ws, timeout=1.0):
        assert (ws / LOCK).read_text().startswith(f"{os.getpid()}:")


def test_temp_files_of_killed_runs_are_removed_and_user_files_kept(tmp_path: Path) -> None:
    ws = ws_with_note(tmp_path)
    dreams = ws / "memory/.dreams"
    (dreams / "backups").mkdir(parents=True)
    (ws / "memory/dreaming/rem").mkdir(parents=True)
    ours = [ws / ".MEMORY.md.openmemd-ab12cd_3.tmp", ws / ".DREAMS.md.openmemd-zz99zz99.tmp",
            dreams / ".short-term-recall.json.openmemd-q1w2e3r4.tmp",
            dreams / "backups/.MEMORY.md.20260406T100000.000000Z.openmemd-a1b2c3d4.tmp",
            ws / "memory/dreaming/rem/.2026-04-06.md.openmemd-k9j8h7g6.tmp",
            # the naming of earlier releases, for the exact files we write
            ws / ".MEMORY.md.k2j3h4g5.tmp", dreams / ".phase-signals.json.x_y_z_12.tmp",
            dreams / "backups/.MEMORY.md.20260406T100000.000000Z.abcdefgh.tmp"]
    users = [ws / ".notes.tmp", ws / ".MEMORY.md.swp", ws / "memory/.draft.md.abcdefgh.tmp",
             ws / ".todo.md.k2j3h4g5.tmp", ws / "memory/.MEMORY.md.openmemd-ab12cd_3.tmp",
             ws / "memory/dreaming/rem/notes.tmp"]
    for path in ours + users:
        path.write_text("x")
    run_sweep(ws, DreamingSettings(timezone="UTC"), now=NOW)
    assert [p for p in ours if p.exists()] == []
    assert [p for p in users if not p.exists()] == []


def test_dry_run_removes_nothing(tmp_path: Path) -> None:
    ws = ws_with_note(tmp_path)
    leftover = ws / ".MEMORY.md.openmemd-ab12cd_3.tmp"
    leftover.write_text("x")
    run_sweep(ws, DreamingSettings(timezone="UTC"), now=NOW, dry_run=True)
    assert leftover.exists()
