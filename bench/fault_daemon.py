"""The daemon and workspaces bench/faults.py runs its scenarios against."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from openmemd.client import Client, DaemonNotRunning


class Daemon:
    """`openmemd run --foreground` on a workspace, with its own state dir and ipc endpoint."""

    def __init__(self, root: Path, ws: Path, provider: str, extra_toml: str = "") -> None:
        self.root, self.ws = root, ws
        self.endpoint = f"ipc://{root}/d.sock"
        self.config = root / "config.toml"
        self.config.write_text(f'[embedding]\nprovider = "{provider}"\n{extra_toml}')
        self.env = {**os.environ, "OPENMEMD_ENDPOINT": self.endpoint}
        self.proc: subprocess.Popen[bytes] | None = None

    def args(self, *extra: str) -> list[str]:
        return [sys.executable, "-m", "openmemd", *extra, "--config", str(self.config),
                "--workspace", str(self.ws), "--state-dir", str(self.root / "state")]

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args("run", "--foreground"), env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with Client(self.endpoint, timeout=1) as c:
                    c.ping()
                    c.sync()
                return
            except DaemonNotRunning:
                time.sleep(0.05)
        raise SystemExit("daemon did not start")

    def client(self, timeout: float = 10) -> Client:
        return Client(self.endpoint, timeout=timeout)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(dir="/tmp", prefix="omf"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def notes_workspace(root: Path, notes: int) -> Path:
    rng = random.Random(5)
    words = ["release", "budget", "meeting", "design", "database", "migration", "garden",
             "travel", "recipe", "doctor", "invoice", "project", "deadline", "review"]
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- The user is allergic to peanuts.\n")
    for i in range(notes):
        (ws / "memory" / f"2026-01-{1 + i % 28:02d}-{i}.md").write_text(
            f"# note {i}\n\n" + " ".join(rng.choices(words, k=80)) + "\n")
    return ws
