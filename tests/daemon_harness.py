"""The real daemon in a subprocess for end-to-end tests: its own workspace, state dir, config
and ipc endpoint under a short /tmp path (a unix socket path has a length limit)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from helpers import wait_for
from openmemd.client import Client, DaemonNotRunning, RemoteInternal, RemoteUnavailable

DEBOUNCE_MS = 100


@dataclass
class Daemon:
    root: Path
    workspace: Path
    config: Path
    endpoint: str
    proc: subprocess.Popen[str] | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def socket_path(self) -> Path:
        return Path(self.endpoint[len("ipc://"):])

    def args(self, *extra: str) -> list[str]:
        return [sys.executable, "-m", "openmemd", *extra, "--config", str(self.config),
                "--workspace", str(self.workspace), "--state-dir", str(self.root / "state")]

    def start(self, extra_env: dict[str, str] | None = None, wait: bool = True) -> None:
        # Its output goes to files, not pipes: a pipe nobody reads fills up (64 KiB of log
        # lines during a long outage) and then the daemon's next log line blocks its thread.
        with (self.root / "daemon.out").open("a") as out, \
                (self.root / "daemon.err").open("a") as err:
            self.proc = subprocess.Popen(self.args("run", "--foreground"), env={
                **self.env, **(extra_env or {})}, stdout=out, stderr=err, text=True)
        if wait:
            assert wait_for(self.ready, 60), self.stop_and_logs()

    def ready(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"daemon exited {self.proc.returncode}: {self.stderr()}")
        try:
            with Client(self.endpoint, timeout=0.5) as c:
                c.ping()
            return True
        except DaemonNotRunning:
            return False

    def client(self, timeout: float = 10.0) -> Client:
        return Client(self.endpoint, timeout=timeout)

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.args(*args), env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)

    def stdout(self) -> str:
        """What the daemon has written to stdout so far (all its runs in this test)."""
        return (self.root / "daemon.out").read_text(errors="replace")

    def stderr(self) -> str:
        return (self.root / "daemon.err").read_text(errors="replace")

    def stop_and_logs(self) -> str:
        if self.proc is None:
            return ""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        return f"stdout:\n{self.stdout()}\nstderr:\n{self.stderr()[-4000:]}"


def make_daemon(config: str = "") -> Iterator[Daemon]:
    root = Path(tempfile.mkdtemp(dir="/tmp", prefix="ome"))
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    cfg = root / "config.toml"
    cfg.write_text(config or f'[embedding]\nprovider = "none"\n[sync]\n'
                   f'watch_debounce_ms = {DEBOUNCE_MS}\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENMEMD_", "NOTIFY_",
                                                                     "WATCHDOG_"))}
    endpoint = f"ipc://{root}/d.sock"
    env["OPENMEMD_ENDPOINT"] = endpoint
    # No dashboard unless a test asks for one: parallel daemons would contend for its port.
    env["OPENMEMD_DASHBOARD_PORT"] = "0"
    d = Daemon(root, ws, cfg, endpoint, env=env)
    try:
        yield d
    finally:
        if d.proc is not None and d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait(10)
        shutil.rmtree(root, ignore_errors=True)


def finds(d: Daemon, query: str, path: str, seen: list[str]) -> Callable[[], bool]:
    """True once `query` finds `path`; an `unavailable` answer is fine, `internal` is not."""
    def check() -> bool:
        try:
            with d.client() as c:
                reply = c.search(query, min_score=0.0, max_results=20)
        except RemoteUnavailable as exc:
            seen.append(str(exc))
            return False
        except RemoteInternal as exc:
            raise AssertionError(f"internal error from the daemon: {exc}") from None
        return path in {r["path"] for r in reply["results"]}
    return check


def daemon_problems(d: Daemon) -> list[str]:
    with d.client() as c:
        return c.status()["problems"]


def zebra_daemon() -> Iterator[Daemon]:
    """A started daemon whose workspace holds one searchable note (a zebra called Zora); stops
    it cleanly (exit 0) afterwards. For module-scoped fixtures."""
    gen = make_daemon()
    d = next(gen)
    (d.workspace / "MEMORY.md").write_text("# Memory\n\nThe zebra is called Zora.\n")
    d.start()
    with d.client() as c:
        assert wait_for(lambda: bool(c.search("zebra", min_score=0.0)["results"]), 30)
    yield d
    assert d.stop() == 0
    gen.close()
