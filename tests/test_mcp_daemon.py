"""`openmemd mcp` and the `add` op with the real daemon running (one memory, whichever way in)."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator

import anyio
import pytest

from daemon_harness import Daemon, make_daemon
from helpers import wait_for
from mcp_session import call, call_error, mcp_session
from openmemd.client import RemoteBadRequest


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    yield from make_daemon()


def session(d: Daemon):
    return mcp_session(d.workspace, d.root / "state", d.config, endpoint=d.endpoint)


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
        note = c.add("The boiler code is 7741", "long-term")
        assert note["citation"] == "MEMORY.md#L3" and note["indexed"] is True
        # No waiting: the daemon's writer indexed the file before it replied.
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


def test_mcp_through_the_daemon_adds_searches_and_counts_recalls(daemon: Daemon) -> None:
    (daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    daemon.start()

    async def scenario() -> dict:
        async with session(daemon) as s:
            status = await call(s, "memory_status")
            assert status["mode"] == "daemon" and status["daemon"]["pid"] == daemon.proc.pid
            assert status["workspace"] == str(daemon.workspace)
            added = await call(s, "memory_add", {"text": "The cat is called Miso"})
            found = await call(s, "memory_search", {"query": "cat Miso", "minScore": 0})
            assert [r["path"] for r in found["results"]] == [added["path"]]
            assert found["mode"] == "fts-only" and "tookMs" in found
            got = await call(s, "memory_get", {"path": added["path"],
                                               "from": added["startLine"]})
            assert got["text"] == "- The cat is called Miso"
            return added

    added = anyio.run(scenario)
    # The daemon recorded the search as a recall for dreaming, as for a socket search.
    assert wait_for(lambda: recalls_of(daemon, added["path"]) >= 1, 30)
    assert daemon.stop() == 0


def test_a_daemon_that_dies_mid_session_is_replaced_by_in_process_work(daemon: Daemon) -> None:
    (daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    daemon.start()

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
