"""A cold start answers at once (issue 28, item 4): with no daemon and a never-indexed
workspace, a search writes the keyword rows, answers by keyword -- saying so, and how much is
indexed -- and the vectors fill in the background, between the calls of a long session.

The real default model, the real local handler and the real MCP SDK client; what is asserted
is what the reply says while vectors are still pending, never how long it took.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from helpers import wait_for
from mcp_session import call, mcp_session
from openmemd.api.handler import LocalHandler
from openmemd.protocol.requests import SearchRequest, StatusRequest

WORDS = ["budget", "meeting", "design", "database", "migration", "garden", "travel", "recipe",
         "invoice", "hiring"]


def notes(workspace: Path, count: int = 8) -> None:
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    for i in range(count):
        (workspace / "memory" / f"2026-02-{i + 10:02d}.md").write_text("\n".join(
            f"Line {n} of day {i}: " + " ".join(WORDS[(n + k + i) % 10] for k in range(12))
            for n in range(60)) + "\n")


def test_a_cold_search_answers_by_keyword_and_the_fill_goes_on(make_settings,
                                                                workspace: Path) -> None:
    notes(workspace)
    handler = LocalHandler(make_settings(provider="local"), workspace=workspace)
    try:
        reply = handler(SearchRequest(query="pelican", agent="main", min_score=0.0)).to_json()
        status = handler(StatusRequest(agent="main")).to_json()["agents"]["main"]
        assert reply["results"][0]["path"] == "MEMORY.md"
        assert reply["mode"] == "fts-only"
        assert reply["degraded"].startswith("the index is being built: 9 files indexed, vectors")
        assert reply["indexing"] is True
        assert status["pendingVectors"] > 0  # it answered before the vectors were embedded
        # the fill goes on between calls, to the last vector; then search is hybrid
        assert wait_for(lambda: handler(StatusRequest(agent="main")).to_json()["agents"]["main"]
                        ["pendingVectors"] == 0, 600, interval=0.5)
        # the last vector stored, the fill's thread still has to end (a moment, longer on a
        # loaded machine): searches stay keyword-only until it has
        replies: list[dict] = []
        assert wait_for(lambda: replies.append(handler(SearchRequest(
            query="pelican", agent="main", min_score=0.0)).to_json())
            or "indexing" not in replies[-1], 60, interval=0.5)
        assert replies[-1]["mode"] == "hybrid"
    finally:
        handler.close()


def test_a_cold_mcp_search_sends_progress_and_answers_by_keyword(make_settings,
                                                                 workspace: Path,
                                                                 tmp_path: Path) -> None:
    make_settings(provider="local")
    notes(workspace)
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def scenario() -> dict:
        async with mcp_session(workspace, tmp_path / "state", tmp_path / "config.toml",
                               endpoint=f"ipc://{tmp_path}/none.sock") as s:
            result = await s.call_tool("memory_search", {"query": "pelican", "minScore": 0},
                                       progress_callback=progress)
            assert not result.is_error
            return await call(s, "memory_status") | {"reply": result.structured_content}

    status = anyio.run(scenario)
    reply = status["reply"]
    assert reply["results"][0]["path"] == "MEMORY.md"
    assert reply["mode"] == "fts-only" and "being built" in reply["degraded"]
    assert status["pendingVectors"] > 0
    assert seen and seen[-1][:2] == (9, 9) and "Indexing files" in (seen[-1][2] or "")
