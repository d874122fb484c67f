"""End to end: the real daemon in a subprocess, real sockets, real watcher, real index.

Most tests run with the embedding provider off (keyword search) to stay fast; one runs the real
default model. Every wait is a polling loop with a generous timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import zmq

from helpers import wait_for
from openmemd.client import Client, DaemonNotRunning

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
        self.proc = subprocess.Popen(self.args("run", "--foreground"), env={
            **self.env, **(extra_env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        if wait:
            assert wait_for(self.ready, 60), self.stop_and_logs()

    def ready(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"daemon exited {self.proc.returncode}: "
                                 f"{self.proc.stderr.read() if self.proc.stderr else ''}")
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

    def stop_and_logs(self) -> str:
        if self.proc is None:
            return ""
        if self.proc.poll() is None:
            self.proc.kill()
        out, err = self.proc.communicate(timeout=10)
        return f"stdout:\n{out}\nstderr:\n{err[-4000:]}"




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
    d = Daemon(root, ws, cfg, endpoint, env=env)
    try:
        yield d
    finally:
        if d.proc is not None and d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait(10)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    yield from make_daemon()


@pytest.fixture(scope="module")
def running() -> Iterator[Daemon]:
    gen = make_daemon()
    d = next(gen)
    (d.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    d.start()
    yield d
    assert d.stop() == 0
    gen.close()


def paths_for(d: Daemon, query: str) -> set[str]:
    with d.client() as c:
        reply = c.search(query, min_score=0.0, max_results=20)
    return {r["path"] for r in reply["results"]}


def searchable(d: Daemon, query: str, path: str) -> Callable[[], bool]:
    return lambda: path in paths_for(d, query)


def gone(d: Daemon, query: str, path: str) -> Callable[[], bool]:
    return lambda: path not in paths_for(d, query)


# -- the index follows the workspace ------------------------------------------------------------

def test_startup_reconcile_indexes_existing_notes(running: Daemon) -> None:
    assert wait_for(searchable(running, "pelican", "MEMORY.md"))


def test_plain_write_update_and_delete(running: Daemon) -> None:
    note = running.workspace / "memory" / "2026-03-01.md"
    note.write_text("Met Arvid about the quokka migration.\n")
    assert wait_for(searchable(running, "quokka", "memory/2026-03-01.md"))
    note.write_text("Met Arvid about the wombat migration.\n")
    assert wait_for(searchable(running, "wombat", "memory/2026-03-01.md"))
    assert wait_for(gone(running, "quokka", "memory/2026-03-01.md"))
    note.unlink()
    assert wait_for(gone(running, "wombat", "memory/2026-03-01.md"))


def test_atomic_rename_save(running: Daemon) -> None:
    target = running.workspace / "memory" / "atomic.md"
    tmp = running.workspace / "memory" / ".atomic.md.tmp"
    tmp.write_text("The axolotl tank needs cleaning.\n")
    os.replace(tmp, target)
    assert wait_for(searchable(running, "axolotl", "memory/atomic.md"))
    tmp.write_text("The narwhal tank needs cleaning.\n")
    os.replace(tmp, target)
    assert wait_for(searchable(running, "narwhal", "memory/atomic.md"))
    assert wait_for(gone(running, "axolotl", "memory/atomic.md"))


def test_vim_style_save(running: Daemon) -> None:
    note = running.workspace / "memory" / "vim.md"
    note.write_text("Original: capybara notes.\n")
    assert wait_for(searchable(running, "capybara", "memory/vim.md"))
    backup = running.workspace / "memory" / "vim.md~"
    os.rename(note, backup)
    note.write_text("Rewritten: okapi notes.\n")
    backup.unlink()
    assert wait_for(searchable(running, "okapi", "memory/vim.md"))
    assert wait_for(gone(running, "capybara", "memory/vim.md"))


def test_new_subdirectory_and_tree_moved_in(running: Daemon) -> None:
    sub = running.workspace / "memory" / "projects" / "alpha"
    sub.mkdir(parents=True)
    (sub / "plan.md").write_text("The pangolin milestone is in May.\n")
    assert wait_for(searchable(running, "pangolin", "memory/projects/alpha/plan.md"))
    outside = Path(tempfile.mkdtemp(dir="/tmp", prefix="omx"))
    try:
        (outside / "tree" / "deeper").mkdir(parents=True)
        (outside / "tree" / "deeper" / "n.md").write_text("Remember the tapir invoice.\n")
        os.rename(outside / "tree", running.workspace / "memory" / "imported")
        assert wait_for(searchable(running, "tapir", "memory/imported/deeper/n.md"))
        # and moved out again: removed (via the reconcile the watcher asks for)
        os.rename(running.workspace / "memory" / "imported", outside / "back")
        assert wait_for(gone(running, "tapir", "memory/imported/deeper/n.md"))
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def test_get_and_sync_ops(running: Daemon) -> None:
    with running.client() as c:
        assert c.ping()["agents"] == {"main": {
            "workspace": str(running.workspace), "ok": True,
            "dbPath": str(running.root / "state" / "memory" / "main.sqlite")}}
        got = c.get("MEMORY.md", from_line=3, lines=1)
        assert got["text"].strip() == "The launch codeword is pelican."
        report = c.sync()["report"]
        assert report["scanned"] >= 1
        assert c.sync(wait=False)["queued"] is True
        with pytest.raises(Exception) as info:
            c.get("../etc/passwd")
        assert getattr(info.value, "code", "") in ("forbidden", "not_found", "bad_request")
        with pytest.raises(Exception) as unknown:
            c.search("x", agent="nobody")
        assert getattr(unknown.value, "code", "") == "not_found"


def test_searches_accumulate_recalls_and_dreaming_runs(running: Daemon) -> None:
    from datetime import datetime

    day = datetime.now().astimezone().date().isoformat()  # the daemon's local day buckets
    note = f"memory/{day}.md"
    (running.workspace / note).write_text("We adopted a grey cat named Ferrous.\n")
    assert wait_for(searchable(running, "Ferrous", note))
    store = running.workspace / "memory" / ".dreams" / "short-term-recall.json"

    def recalls() -> int:
        try:
            entries = json.loads(store.read_text())["entries"]
        except (OSError, ValueError, KeyError):
            return 0
        return sum(e["recallCount"] for e in entries.values() if e["path"] == note)

    with running.client() as c:
        for query in ("Ferrous", "grey cat named", "adopted a cat", "Ferrous the cat"):
            assert note in {r["path"] for r in c.search(query, min_score=0.0)["results"]}
        assert wait_for(lambda: recalls() == 4)  # recorded off the reply path
        c.search("Ferrous", min_score=0.0)  # the same query on the same day counts once
        time.sleep(0.5)
        assert recalls() == 4
        dry = c.dream(phase="all", dry_run=True)["result"]
        assert dry["dryRun"] is True
        assert not (running.workspace / "memory" / "dreaming").exists()
        result = c.dream(phase="all")["result"]
        assert result["light"]["staged"] >= 1
        assert (running.workspace / "memory" / "dreaming" / "light" / f"{day}.md").is_file()
        # 4 recalls by 4 distinct queries pass the default gates (>= 3 each, score >= 0.8)
        memory_md = (running.workspace / "MEMORY.md").read_text()
        marker = f"<!-- openclaw-memory-promotion:memory:{note}:1:1 -->"
        assert memory_md.count(marker) == 1 and "grey cat named Ferrous" in memory_md
        assert [p["key"] for p in result["promoted"]] == [f"memory:{note}:1:1"]
        again = c.dream(phase="all")["result"]
        assert again["promoted"] == [] and again["deep"]["promoted"] == 0
        assert (running.workspace / "MEMORY.md").read_text().count(marker) == 1
        # the watcher re-indexes what dreaming wrote, like any other edit
        assert wait_for(searchable(running, "Ferrous", "MEMORY.md"))
        status = c.status()
        assert status["agents"]["main"]["dreaming"]["lastSweep"] is not None


# -- protocol robustness -------------------------------------------------------------------------

def test_malformed_messages_get_error_replies(running: Daemon) -> None:
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 10000)
    sock.connect(running.endpoint)
    try:
        cases = [b"", b"\xff\xfe", b"not json", b"[1,2]", b'{"op":"nope"}',
                 b'{"op":"search"}', b'{"op":"search","query":"x","maxResults":"a"}',
                 b'{"op":"get","path":5}', json.dumps({"op": "ping", "pad": "x" * 1_100_000}
                                                      ).encode()]
        for body in cases:
            sock.send(body)
            reply = json.loads(sock.recv())
            assert reply["ok"] is False and reply["error"]["code"] == "bad_request", body[:30]
        sock.send_multipart([b'{"op":"ping"}', b"extra"])
        assert json.loads(sock.recv())["error"]["code"] == "bad_request"
    finally:
        sock.close()
    with running.client() as c:
        assert c.ping()["pong"] is True


def test_lone_surrogates_do_not_silence_the_daemon(running: Daemon) -> None:
    # JSON "\ud800" decodes to a lone surrogate; replies used to fail to encode and kill the
    # worker, and four such requests left nothing answering.
    bodies = [b'{"op":"ping","id":"\\ud800"}', b'{"op":"search","query":"x","id":"\\udfff"}',
              b'{"op":"search","query":"pel\\ud800ican"}', b'{"op":"get","path":"\\ud800.md"}',
              b'{"op":"status","id":"\\ud800"}']
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 10000)
    sock.connect(running.endpoint)
    try:
        for _ in range(3):
            for body in bodies:
                sock.send(body)
                reply = json.loads(sock.recv())
                assert "ok" in reply, body
        sock.send(bodies[0])
        assert json.loads(sock.recv())["id"] == "\ud800"
        sock.send(bodies[2])
        assert "'query' must be valid Unicode" in json.loads(sock.recv())["error"]["message"]
    finally:
        sock.close()
    with running.client() as c:
        assert c.ping()["pong"] is True
        # No worker died or hangs (that would keep it degraded for minutes); a sync still
        # settling on a loaded machine may make it degraded for a moment.
        assert wait_for(lambda: c.status()["health"] == "healthy", 30), c.status()["problems"]


def test_cli_and_daemon_refuse_the_same_parameters(running: Daemon) -> None:
    from openmemd.client import RemoteBadRequest

    cases = [(["--min-score", "5"], {"min_score": 5.0}, "min-score", "minScore"),
             (["--max-results", "-1"], {"max_results": -1}, "max-results", "maxResults")]
    for flags, kwargs, flag, wire in cases:
        proc = running.cli("search", "pelican", *flags)
        assert proc.returncode == 2 and proc.stdout == "", proc
        assert proc.stderr.startswith(f"openmemd: --{flag} must be between")
        with running.client() as c, pytest.raises(RemoteBadRequest) as info:
            c.search("pelican", **kwargs)
        assert info.value.message == proc.stderr.strip().replace(
            f"openmemd: --{flag}", f"'{wire}'")
    proc = running.cli("search", "")
    assert (proc.returncode, proc.stderr) == (2, "openmemd: the query must not be empty\n")


def test_sixteen_concurrent_clients(running: Daemon) -> None:
    errors: list[str] = []

    def work(n: int) -> None:
        try:
            with running.client() as c:
                for _ in range(10):
                    reply = c.search("pelican", min_score=0.0)
                    if "MEMORY.md" not in {r["path"] for r in reply["results"]}:
                        errors.append(f"client {n}: {reply}")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(f"client {n}: {exc!r}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:3]


# -- lifecycle -----------------------------------------------------------------------------------

def test_sigterm_exits_zero_and_removes_the_socket(daemon: Daemon) -> None:
    daemon.start()
    assert daemon.socket_path.exists()
    started = time.monotonic()
    assert daemon.stop(signal.SIGTERM) == 0
    assert time.monotonic() - started < 10
    assert not daemon.socket_path.exists()
    with pytest.raises(DaemonNotRunning):
        Client(daemon.endpoint, timeout=0.5).ping()


def test_sigint_exits_zero(daemon: Daemon) -> None:
    daemon.start()
    assert daemon.stop(signal.SIGINT) == 0


def test_second_instance_is_refused(daemon: Daemon) -> None:
    daemon.start()
    second = subprocess.run(daemon.args("run", "--foreground"), env=daemon.env,
                            capture_output=True, text=True, timeout=60)
    assert second.returncode == 1
    assert "already running" in second.stderr and str(daemon.proc.pid) in second.stderr
    with daemon.client() as c:  # the first one is unharmed
        assert c.ping()["pid"] == daemon.proc.pid
    assert daemon.stop() == 0


def test_stale_socket_is_replaced(daemon: Daemon) -> None:
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(daemon.socket_path))
    stale.close()  # the file a crashed daemon leaves behind
    with pytest.raises(DaemonNotRunning):
        Client(daemon.endpoint, timeout=1).ping()
    (daemon.socket_path.parent / (daemon.socket_path.name + ".lock")).write_text("999999\n")
    daemon.start()
    with daemon.client() as c:
        assert c.ping()["pid"] == daemon.proc.pid
    assert daemon.stop() == 0


def test_crash_then_restart(daemon: Daemon) -> None:
    daemon.start()
    assert daemon.stop(signal.SIGKILL) == -signal.SIGKILL
    daemon.start()  # lock released by the kernel, stale socket replaced
    assert daemon.stop() == 0


def test_status_exit_codes(daemon: Daemon) -> None:
    not_running = daemon.cli("status")
    assert not_running.returncode == 2, not_running.stderr
    daemon.start()
    assert wait_for(lambda: daemon.cli("status").returncode == 0, 30)
    st = daemon.cli("status", "--json", "--deep")
    assert st.returncode == 0, st.stdout + st.stderr
    data = json.loads(st.stdout)
    main = data["agents"]["main"]
    assert data["health"] == "healthy" and data["problems"] == []
    assert main["watcher"].startswith("running") and main["queueDepth"] == 0
    assert main["probe"]["ok"] is True
    assert data["scheduler"]["jobs"]["dreaming"] and main["reconcile"]["next"]
    assert data["rssBytes"] > 0 and data["pid"] == daemon.proc.pid
    assert daemon.stop() == 0


def test_status_degraded_when_an_agent_is_broken(daemon: Daemon) -> None:
    daemon.config.write_text(
        f'[embedding]\nprovider = "none"\n[sync]\nwatch_debounce_ms = {DEBOUNCE_MS}\n'
        f'[agents.broken]\nworkspace = "{daemon.root}/missing"\n', encoding="utf-8")
    daemon.start()
    st = daemon.cli("status", "--json")
    assert st.returncode == 1, st.stdout + st.stderr
    data = json.loads(st.stdout)
    assert data["health"] == "degraded"
    assert any(p.startswith("broken:") for p in data["problems"])
    with daemon.client() as c:
        with pytest.raises(Exception) as info:
            c.search("x", agent="broken")
        assert getattr(info.value, "code", "") == "unavailable"
    assert daemon.stop() == 0


def test_sighup_reloads_the_config(daemon: Daemon) -> None:
    daemon.start()
    with daemon.client() as c:
        before = c.status()["agents"]["main"]["watch"]["debounceMs"]
    assert before == DEBOUNCE_MS
    daemon.config.write_text('[embedding]\nprovider = "none"\n[sync]\nwatch_debounce_ms = 321\n',
                             encoding="utf-8")
    daemon.proc.send_signal(signal.SIGHUP)

    def reloaded() -> bool:
        with daemon.client() as c:
            return c.status()["agents"]["main"]["watch"]["debounceMs"] == 321
    assert wait_for(reloaded)
    assert daemon.stop() == 0


def test_systemd_notify_ready_and_watchdog(daemon: Daemon) -> None:
    path = daemon.root / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(30)
    try:
        daemon.start({"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "1000000"}, wait=False)
        messages: list[str] = []
        while not any(m == "WATCHDOG=1" for m in messages):
            messages.append(sock.recv(4096).decode())
        ready = [m for m in messages if m.startswith("READY=1")]
        assert ready, messages
        assert messages.index(ready[0]) < messages.index("WATCHDOG=1")
        assert daemon.ready()  # READY was sent once it serves
        assert daemon.stop() == 0
        rest = []
        sock.settimeout(2)
        try:
            while True:
                rest.append(sock.recv(4096).decode())
        except TimeoutError:
            pass
        assert "STOPPING=1" in rest
    finally:
        sock.close()


# -- the real default model ----------------------------------------------------------------------

@pytest.fixture
def model_daemon() -> Iterator[Daemon]:
    yield from make_daemon(f"[sync]\nwatch_debounce_ms = {DEBOUNCE_MS}\n")


def test_real_model_hybrid_search(model_daemon: Daemon) -> None:
    d = model_daemon
    (d.workspace / "MEMORY.md").write_text(
        "# Memory\n\nThe user's cat is called Miso and sleeps on the radiator.\n")
    d.start()
    with d.client(timeout=120) as c:
        report = c.sync()["report"]
        assert report["scanned"] == 1
        status = c.status()["agents"]["main"]
        if status["provider"]["id"] == "none":
            pytest.skip(f"no local model here: {status['provider']['unavailableReason']}")
        reply = c.search("what is the name of my cat", min_score=0.0)
        assert reply["mode"] == "hybrid"
        assert reply["results"] and reply["results"][0]["path"] == "MEMORY.md"
    (d.workspace / "memory" / "2026-04-02.md").write_text("Booked the dentist for Tuesday.\n")

    def indexed() -> bool:
        with d.client(timeout=60) as c:
            hits = c.search("dentist Tuesday", min_score=0.0)["results"]
        return any(h["path"] == "memory/2026-04-02.md" and "dentist" in h["snippet"]
                   for h in hits)
    assert wait_for(indexed, 60)
    assert d.stop() == 0
