"""The command line uses a running daemon only when it serves the same workspace and state dir,
and finds that daemon whatever the shell's environment (real daemon subprocesses)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon_harness import Daemon, make_daemon, zebra_daemon
from helpers import wait_for
from openmemd import discovery
from openmemd.client import Client
from openmemd.config import index_location, load_settings
from openmemd.protocol.replies import ServedAgent


@pytest.fixture(scope="module")
def served() -> Iterator[Daemon]:
    """One daemon on workspace A (a note about a zebra), state dir root/state."""
    yield from zebra_daemon()


def other_cli(d: Daemon, tmp_path: Path, *, state: Path | None = None,
              workspace: Path | None = None) -> tuple[Path, Path, object]:
    """A CLI set up by its own config file (no --workspace flag): another workspace B (a note
    about a yak) and by default another state dir, on the same endpoint as the daemon."""
    ws = workspace or tmp_path / "wsB"
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("# Memory\n\nThe yak is called Yuri.\n")
    state = state or tmp_path / "stateB"
    cfg = tmp_path / "b.toml"
    cfg.write_text(f'workspace = "{ws}"\nstate_dir = "{state}"\n[embedding]\nprovider = "none"\n',
                   encoding="utf-8")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "openmemd", *args, "--config", str(cfg)],
                              env=d.env, capture_output=True, text=True, timeout=60)
    return ws, state, run


def test_cli_with_another_workspace_and_state_dir_works_in_process(served, tmp_path):
    _ws, state, run = other_cli(served, tmp_path)
    found = run("search", "yak", "--json")
    assert found.returncode == 0, found.stderr
    assert [r["path"] for r in json.loads(found.stdout)["results"]] == ["MEMORY.md"]
    assert "Yuri" in json.loads(found.stdout)["results"][0]["snippet"]
    assert "No matches." in run("search", "zebra").stdout  # the daemon's note is not ours
    assert (state / "memory" / "main.sqlite").exists()


def test_status_of_a_workspace_the_daemon_does_not_serve_exits_2(served, tmp_path):
    ws, _state, run = other_cli(served, tmp_path)
    st = run("status", "--json")
    assert st.returncode == 2, st.stdout + st.stderr
    data = json.loads(st.stdout)
    assert data["running"] is False and data["agents"][0]["workspace"] == str(ws)
    assert data["otherDaemons"][0]["pid"] == served.proc.pid
    text = run("status").stdout
    assert "daemon: not serving this workspace" in text
    assert f"pid {served.proc.pid}" in text and str(served.workspace) in text
    # The same with the daemon's own config and state dir, and only --workspace differing.
    flag = subprocess.run([sys.executable, "-m", "openmemd", "status", "--json", "--config",
                           str(served.config), "--state-dir", str(served.root / "state"),
                           "--workspace", str(ws)], env=served.env, capture_output=True,
                          text=True, timeout=60)
    assert flag.returncode == 2, flag.stdout + flag.stderr
    assert json.loads(flag.stdout)["agents"][0]["workspace"] == str(ws)


def test_same_workspace_other_state_dir_is_not_sent_to_the_daemon(served, tmp_path):
    _ws, state, run = other_cli(served, tmp_path, workspace=served.workspace)
    report = run("index", "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["indexed"] >= 1
    assert (state / "memory" / "main.sqlite").exists()  # our index, not the daemon's


def test_writing_an_index_a_daemon_holds_for_another_workspace_says_locked(served, tmp_path):
    ws, _state, run = other_cli(served, tmp_path, state=served.root / "state")
    got = run("index")
    assert got.returncode == 1, got.stdout + got.stderr
    assert got.stderr.count("\n") == 1 and "being written by another openmemd process" in \
        got.stderr and f"pid {served.proc.pid}" in got.stderr
    # ... and says which workspace the daemon serves and which this command meant (a daemon
    # started with --workspace, a command run without it)
    assert f"serves main: {served.workspace.resolve()}" in got.stderr, got.stderr
    assert f"this command's workspace is {ws.resolve()}" in got.stderr, got.stderr


def test_unknown_agent_is_one_line_exit_2(served):
    for command in (("status",), ("status", "--json"), ("search", "zebra")):
        got = served.cli(*command, "--agent", "nobody")
        assert got.returncode == 2, got.stdout + got.stderr
        assert got.stdout == "" and got.stderr.count("\n") == 1
        assert "unknown agent 'nobody'" in got.stderr


def test_status_deep_text_shows_the_probe(served):
    st = served.cli("status", "--deep")
    assert st.returncode == 0, st.stdout + st.stderr
    assert "daemon: running" in st.stdout
    probe = [line for line in st.stdout.splitlines() if line.strip().startswith("Probe:")]
    assert probe and probe[0].strip().startswith("Probe: ok · "), st.stdout


def test_daemon_found_without_the_services_runtime_dir(tmp_path):
    """The service's XDG_RUNTIME_DIR is not in this shell: the daemon's endpoint record in the
    state dir still leads the CLI to it."""
    gen = make_daemon()
    d = next(gen)
    try:
        runtime = d.root / "rt"
        runtime.mkdir(mode=0o700)
        del d.env["OPENMEMD_ENDPOINT"]  # the default endpoint, from the runtime dir
        d.endpoint = f"ipc://{runtime}/openmemd/openmemd.sock"
        d.start(extra_env={"XDG_RUNTIME_DIR": str(runtime)})
        record = d.root / "state" / "openmemd.endpoint"
        # written just after the socket is bound, before READY: a ping can come first
        assert wait_for(record.exists, 10)
        assert record.read_text().strip() == d.endpoint
        assert stat.S_IMODE(record.stat().st_mode) == 0o600
        shell = {k: v for k, v in d.env.items() if k != "XDG_RUNTIME_DIR"}
        st = subprocess.run(d.args("status", "--json"), env=shell, capture_output=True,
                            text=True, timeout=60)
        assert st.returncode == 0, st.stdout + st.stderr
        assert json.loads(st.stdout)["pid"] == d.proc.pid
        assert d.stop(signal.SIGTERM) == 0
        assert not record.exists()  # a clean stop takes its record with it
    finally:
        gen.close()


def test_stale_endpoint_record_is_ignored(tmp_path, sockdir):
    state = tmp_path / "state"
    state.mkdir()
    (state / "openmemd.endpoint").write_text(f"ipc://{sockdir}/gone.sock\n")
    (sockdir / "gone.sock").write_text("")  # a socket file nobody listens on
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    cfg = tmp_path / "c.toml"
    cfg.write_text('[embedding]\nprovider = "none"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMEMD_")}
    env["XDG_RUNTIME_DIR"] = str(sockdir)  # no daemon at this shell's default socket either
    got = subprocess.run([sys.executable, "-m", "openmemd", "search", "anything", "--config",
                          str(cfg), "--workspace", str(ws), "--state-dir", str(state)],
                         env=env, capture_output=True, text=True, timeout=60)
    assert got.returncode == 0 and got.stdout.strip() == "No matches.", got.stderr


def test_ping_names_each_agents_index(served):
    with Client(served.endpoint, timeout=10) as c:
        info = c.ping()["agents"]["main"]
    assert info["index"] == str((served.root / "state" / "memory" / "main.sqlite").resolve())


def test_a_postgres_index_is_known_by_its_server_and_namespace_not_a_sqlite_path(tmp_path):
    # Two commands with one state dir but other namespaces mean other indexes; one state dir
    # or another, the same server and namespace is the same index (there is no file).
    def settings(namespace: str, state: str):
        cfg = tmp_path / f"{namespace}-{state}.toml"
        cfg.write_text(f'state_dir = "{tmp_path / state}"\n[store]\nbackend = "postgres"\n'
                       f'url = "postgresql://me:secret@db.example:5432/memory"\n'
                       f'namespace = "{namespace}"\n')
        return load_settings(cfg)

    a, b, a_elsewhere = settings("a", "s1"), settings("b", "s1"), settings("a", "s2")
    assert index_location(a, "main") != index_location(b, "main")
    assert index_location(a, "main") == index_location(a_elsewhere, "main")
    assert "secret" not in index_location(a, "main")
    [target] = discovery.targets(a, ["main"])
    daemon = discovery.Seen("ipc:///x", 1, {"main": ServedAgent(
        workspace=target.workspace, ok=True, index=index_location(b, "main"))})
    assert not daemon.serves(target)


def test_a_daemon_slow_to_answer_its_ping_is_waited_for_not_worked_beside(served):
    """A daemon that took the ping but answers late (busy: here stopped for 3 s, longer than
    discovery's 2-s ping) is still the one a command uses; before, the command worked
    in-process beside it (a socket nobody listens on: test_stale_endpoint_record_is_ignored)."""
    settings = load_settings(served.config, env=served.env, overrides={
        "workspace": str(served.workspace), "state_dir": str(served.root / "state")})
    wanted = discovery.targets(settings, ["main"])
    assert served.proc is not None
    os.kill(served.proc.pid, signal.SIGSTOP)
    try:
        timer = threading.Timer(3.0, os.kill, (served.proc.pid, signal.SIGCONT))
        timer.start()
        started = time.monotonic()
        lookup = discovery.find(settings, wanted)
        waited = time.monotonic() - started
    finally:
        timer.cancel()
        os.kill(served.proc.pid, signal.SIGCONT)
    assert lookup.endpoint == served.endpoint, lookup
    assert waited >= 2.5  # it was answered only after the daemon went on
