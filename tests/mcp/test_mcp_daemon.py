"""`openmemd mcp` and the `add` op with the real daemon running (one memory, whichever way in)."""

from __future__ import annotations

import json
import select
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from daemon_harness import Daemon, make_daemon
from helpers import wait_for
from mcp_session import (
    call,
    call_error,
    every_bad_line_is_answered_and_the_session_goes_on,
    mcp_session,
    server_args,
)
from openmemd.client import RemoteBadRequest


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    yield from make_daemon()


def session(d: Daemon, env: dict[str, str] | None = None):
    return mcp_session(d.workspace, d.root / "state", d.config, endpoint=d.endpoint, env=env)


def no_sdk_env(d: Daemon) -> dict[str, str]:
    """An environment in which `import mcp` (and `mcp_types`) fails, as without the extra."""
    blocker = d.root / "no-sdk"
    for name in ("mcp", "mcp_types"):
        (blocker / name).mkdir(parents=True, exist_ok=True)
        (blocker / name / "__init__.py").write_text(
            f"raise ImportError('blocked by the test', name={name!r})\n")
    return {"PYTHONPATH": str(blocker)}


def mcp_socket_of(d: Daemon) -> str | None:
    with d.client() as c:
        return c.ping().get("mcp")


def start_hosting(d: Daemon) -> Path:
    """Start the daemon and wait until it has imported the SDK and serves MCP sessions."""
    d.start()
    assert wait_for(lambda: mcp_socket_of(d) is not None, 60), d.stop_and_logs()
    return Path(mcp_socket_of(d) or "")


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}}


def raw_mcp(d: Daemon, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`openmemd mcp` as a host starts it, driven line by line (to see its exit code)."""
    return subprocess.Popen(
        [sys.executable, *server_args(d.workspace, d.root / "state", d.config)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**d.env, **env})


def send(proc: subprocess.Popen[bytes], message: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def receive(proc: subprocess.Popen[bytes], timeout: float = 30) -> dict:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no reply from openmemd mcp"
    return json.loads(proc.stdout.readline())


def recalls_of(d: Daemon, path: str) -> int:
    store = d.workspace / "memory" / ".dreams" / "short-term-recall.json"
    try:
        entries = json.loads(store.read_text())["entries"]
    except (OSError, ValueError, KeyError):
        return 0
    return sum(e["recallCount"] for e in entries.values() if e["path"] == path)


def test_add_op_indexes_the_note_before_replying(daemon: Daemon) -> None:
    daemon.start()
    with daemon.client() as c:
        # (a busy writer -- the start-up reconcile -- would queue the note: test_daemon_add_busy)
        assert wait_for(lambda: c.status()["agents"]["main"]["indexer"]["state"] == "idle", 30)
        note = c.add("The boiler code is 7741", "long-term")
        assert note["citation"] == "MEMORY.md#L3" and note["indexed"] is True, note
        # No waiting: the daemon's idle writer indexed the file before it replied.
        hits = c.search("boiler code", min_score=0.0)["results"]
        assert [h["path"] for h in hits] == ["MEMORY.md"]
        for bad, message in (({"text": ""}, "must not be empty"),
                             ({"text": "x", "target": "weekly"}, "'target' must be one of"),
                             ({"text": 3}, "must be a string")):
            with pytest.raises(RemoteBadRequest, match=message):
                c.request({"op": "add", **bad})
    assert (daemon.workspace / "MEMORY.md").read_text() == (
        "# Long-Term Memory\n\n- The boiler code is 7741\n")
    cli = daemon.cli("add", "Water", "the", "ferns", "--json")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["path"].startswith("memory/")
    assert daemon.stop() == 0


def test_mcp_with_a_daemon_pipes_to_its_sessions_without_importing_the_sdk(
        daemon: Daemon) -> None:
    (daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    path = start_hosting(daemon)
    # The daemon's MCP socket is private like its ZeroMQ one.
    assert stat.S_ISSOCK(path.stat().st_mode) and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700

    async def scenario() -> dict:
        # The SDK cannot be imported by `openmemd mcp` here: every answer comes from the
        # daemon's sessions.
        async with session(daemon, no_sdk_env(daemon)) as s:
            tools = {t.name for t in (await s.list_tools()).tools}
            assert tools == {"memory_search", "memory_get", "memory_status", "memory_add",
                             "memory_context"}
            status = await call(s, "memory_status")
            assert status["mode"] == "daemon" and status["daemon"]["pid"] == daemon.proc.pid
            assert status["workspace"] == str(daemon.workspace)
            assert status["store"] == {"backend": "sqlite"}
            added = await call(s, "memory_add", {"text": "The cat is called Miso"})
            assert added["indexed"] is True and "indexError" not in added
            found = await call(s, "memory_search", {"query": "cat Miso", "minScore": 0})
            assert [r["path"] for r in found["results"]] == [added["path"]]
            assert found["mode"] == "fts-only" and "tookMs" in found
            got = await call(s, "memory_get", {"path": added["path"],
                                               "from": added["startLine"]})
            assert got["text"] == "- The cat is called Miso"
            assert "must not be empty" in await call_error(s, "memory_add", {"text": ""})
            return added

    added = anyio.run(scenario)
    # The daemon recorded the search as a recall for dreaming, as for a socket search.
    assert wait_for(lambda: recalls_of(daemon, added["path"]) >= 1, 30)
    assert daemon.stop() == 0
    assert not path.exists()  # removed on a clean stop


def test_mcp_pipe_exits_0_when_stdin_closes(daemon: Daemon) -> None:
    start_hosting(daemon)
    proc = raw_mcp(daemon, no_sdk_env(daemon))
    send(proc, INIT)
    assert receive(proc)["result"]["serverInfo"]["name"] == "openmemd"
    send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert receive(proc)["id"] == 2
    # The host closes stdin (as the SDK's stdio server, a request still running then is
    # cancelled): the pipe shuts the socket's write side, reads to the end, exits 0.
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out == b""
    assert b"went away" not in err
    assert daemon.stop() == 0


def test_mcp_pipe_exits_0_with_one_line_when_the_daemon_dies_mid_session(
        daemon: Daemon) -> None:
    start_hosting(daemon)
    proc = raw_mcp(daemon, no_sdk_env(daemon))
    send(proc, INIT)
    assert "result" in receive(proc)
    daemon.stop(signal.SIGKILL)
    assert proc.wait(30) == 0
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert "the openmemd daemon went away" in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert proc.stdin is not None
    proc.stdin.close()


def test_every_line_a_hosted_session_cannot_read_gets_its_error_and_it_goes_on(
        daemon: Daemon) -> None:
    (daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    start_hosting(daemon)
    proc = raw_mcp(daemon, no_sdk_env(daemon))  # the pipe: every reply comes from the daemon
    try:
        stderr = every_bad_line_is_answered_and_the_session_goes_on(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert "went away" not in stderr
    assert list((daemon.workspace / "memory").glob("*.md")) == []  # the bad add wrote nothing
    assert daemon.stop() == 0


def test_a_call_over_4_mib_to_a_hosted_session_is_a_tool_error_and_it_goes_on(
        daemon: Daemon) -> None:
    (daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    start_hosting(daemon)

    async def scenario() -> None:
        async with session(daemon, no_sdk_env(daemon)) as s:
            big = await call_error(s, "memory_add", {"text": "x" * (5 << 20)})
            assert big.startswith("this call is 52429") and big.endswith(
                "over the 4 MiB (4194304 bytes) limit of one MCP message; nothing was done")
            found = await call(s, "memory_search", {"query": "pelican"})
            assert [r["path"] for r in found["results"]] == ["MEMORY.md"]
            assert (await call(s, "memory_status"))["mode"] == "daemon"

    anyio.run(scenario)
    assert list((daemon.workspace / "memory").glob("*.md")) == []
    assert daemon.stop() == 0


def test_two_concurrent_mcp_sessions_share_the_daemon(daemon: Daemon) -> None:
    start_hosting(daemon)

    async def scenario() -> None:
        env = no_sdk_env(daemon)
        async with session(daemon, env) as one, session(daemon, env) as two:
            added = await call(one, "memory_add", {"text": "The spare key is under the pot"})
            found = await call(two, "memory_search", {"query": "spare key", "minScore": 0})
            assert [r["path"] for r in found["results"]] == [added["path"]]
            statuses = [await call(s, "memory_status") for s in (one, two)]
            assert {st["mode"] for st in statuses} == {"daemon"}

    anyio.run(scenario)
    assert daemon.stop() == 0


def test_each_mcp_session_serves_the_agent_it_was_started_for(daemon: Daemon) -> None:
    work = daemon.root / "work"
    (work / "memory").mkdir(parents=True)
    daemon.config.write_text(daemon.config.read_text() + f'[agents.work]\nworkspace = "{work}"\n',
                             encoding="utf-8")
    start_hosting(daemon)
    env = no_sdk_env(daemon)

    async def scenario() -> None:
        async with session(daemon, env) as main, mcp_session(
                work, daemon.root / "state", daemon.config, endpoint=daemon.endpoint, env=env,
                extra=("--agent", "work")) as other:
            status = await call(other, "memory_status")
            assert (status["mode"], status["agent"]) == ("daemon", "work")
            assert status["workspace"] == str(work)
            added = await call(other, "memory_add", {"text": "The work badge number is 4410"})
            assert (work / added["path"]).exists()
            found = await call(other, "memory_search", {"query": "badge number", "minScore": 0})
            assert [r["path"] for r in found["results"]] == [added["path"]]
            found = await call(main, "memory_search", {"query": "badge number", "minScore": 0})
            assert found["results"] == []
            assert (await call(main, "memory_status"))["agent"] == "main"

    anyio.run(scenario)
    assert daemon.stop() == 0


def test_the_daemon_refuses_an_mcp_session_for_an_unknown_agent(daemon: Daemon) -> None:
    path = start_hosting(daemon)
    for first_line, message in ((b'{"openmemdAgent": "nobody"}\n', "unknown agent 'nobody'"),
                                (b'{"jsonrpc": "2.0"}\n', "the first line must be")):
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(10)
            sock.connect(str(path))
            sock.sendall(first_line)
            reply = sock.makefile("rb").readline()
            assert message in json.loads(reply)["openmemdError"]
            assert sock.recv(10) == b""  # then closed
    assert daemon.stop() == 0


def test_without_the_sdk_in_the_daemon_mcp_serves_in_process_through_the_socket(
        daemon: Daemon) -> None:
    (daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    daemon.start(extra_env=no_sdk_env(daemon))
    assert mcp_socket_of(daemon) is None  # and stays so: the daemon cannot import the SDK

    async def scenario() -> str:
        async with session(daemon) as s:
            status = await call(s, "memory_status")
            assert status["mode"] == "daemon" and status["daemon"]["pid"] == daemon.proc.pid
            added = await call(s, "memory_add", {"text": "The dog is called Pixel"})
            found = await call(s, "memory_search", {"query": "dog Pixel", "minScore": 0})
            assert [r["path"] for r in found["results"]] == [added["path"]]
            return added["path"]

    path = anyio.run(scenario)
    assert wait_for(lambda: recalls_of(daemon, path) >= 1, 30)
    assert daemon.stop() == 0


def test_a_daemon_that_dies_mid_session_is_replaced_by_in_process_work(daemon: Daemon) -> None:
    # The in-process server (a daemon without the SDK) uses the daemon's ZeroMQ socket.
    (daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    daemon.start(extra_env=no_sdk_env(daemon))

    async def scenario() -> None:
        async with session(daemon) as s:
            assert (await call(s, "memory_status"))["mode"] == "daemon"
            daemon.stop(signal.SIGKILL)  # leaves a stale socket behind
            # An add cannot know whether the dead daemon wrote the note: an error, not a
            # second copy; the calls after it run in process.
            assert "may or may not have been written" in await call_error(
                s, "memory_add", {"text": "lost in the crash?"})
            found = await call(s, "memory_search", {"query": "pelican"})
            assert [r["path"] for r in found["results"]] == ["MEMORY.md"]
            assert (await call(s, "memory_status"))["mode"] == "in-process"
            added = await call(s, "memory_add", {"text": "written without the daemon"})
            found = await call(s, "memory_search", {"query": "without the daemon",
                                                    "minScore": 0})
            assert added["path"] in [r["path"] for r in found["results"]]

    anyio.run(scenario)
