"""An MCP `memory_search` (the real SDK client, `openmemd mcp` in process) is a recall as the
CLI's is: a dated note's hit and a Claude Code session's hit (through the session corpus), a
project-narrowed search too. Fake homes from fake_homes.py."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from fake_homes import PROJECT, make_homes

from mcp_session import call, mcp_session


def entries(workspace: Path) -> list[dict[str, object]]:
    store = workspace / "memory" / ".dreams" / "short-term-recall.json"
    return list(json.loads(store.read_text())["entries"].values()) if store.exists() else []


def wait_for(workspace: Path, count: int) -> list[dict[str, object]]:
    """The recorder writes after the reply (a background thread, flushed at exit)."""
    deadline = time.monotonic() + 10
    while len(found := entries(workspace)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


@pytest.mark.slow  # starts `openmemd mcp` (~2 s)
def test_mcp_searches_record_recalls_of_notes_and_agent_sessions(
        make_settings, workspace: Path, tmp_path: Path) -> None:
    now = datetime.now(UTC)
    files = make_homes(tmp_path, now - timedelta(days=1), now - timedelta(days=40))
    make_settings('sources = ["memory", "claude-code", "codex"]\n')
    (workspace / "memory").mkdir(exist_ok=True)
    day = now.date().isoformat()
    (workspace / "memory" / f"{day}.md").write_text("- The gateway VLAN is 42 for the lab.\n")

    async def scenario() -> None:
        async with mcp_session(workspace, tmp_path / "state", tmp_path / "config.toml",
                               endpoint=f"ipc://{tmp_path}/none.sock",
                               env={"HOME": str(files["home"])}) as s:
            note = await call(s, "memory_search", {"query": "gateway VLAN", "minScore": 0})
            assert note["results"][0]["path"] == f"memory/{day}.md"
            agent = await call(s, "memory_search", {"query": "quokka backoff schedule",
                                                    "minScore": 0})
            assert agent["results"][0]["source"] == "claude-code"
            narrowed = await call(s, "memory_search", {"query": "narwhal rounding ledger",
                                                       "minScore": 0, "project": PROJECT})
            assert narrowed["results"][0]["source"] == "claude-code"

    anyio.run(scenario)
    found = wait_for(workspace, 3)
    by_snippet = {str(e["snippet"]): e for e in found}
    assert any("gateway VLAN is 42" in s for s in by_snippet)
    corpus = [e for e in found if str(e["path"]).startswith("memory/.dreams/session-corpus/")]
    assert sorted(str(e["snippet"]).split(":")[0] for e in corpus) == [
        "Assistant", "Subagent assistant"]
    assert all(e["recallCount"] == 1 for e in found)
