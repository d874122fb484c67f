"""A search that meets a damaged index is never held until every vector is embedded again
(issue 25, "Heal without a stuck request"): a one-shot process answers from the keyword rows
the heal writes first while the vectors fill in the background; the daemon's readers answer
`unavailable` at once and leave the rebuild to its writer.

The real default model on a real index truncated on disk, as a failing disk leaves it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import wait_for
from openmemd.api import MemoryIndex
from openmemd.config import Settings
from openmemd.errors import UnavailableError
from openmemd.store.sqlite import db

NOTES = 8


def truncate(path: Path) -> None:
    """To a third of its size, as bench/faults.py does."""
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 3)


@pytest.fixture
def built(make_settings, workspace: Path) -> Settings:
    """An index with every vector written, its rows in the main file (as after the daemon's
    periodic checkpoint), where a truncation hits them."""
    settings = make_settings(provider="local")
    for i in range(NOTES):
        (workspace / "memory" / f"2026-01-{i:03d}.md").write_text(
            f"# Day {i}\n\nWe talked about topic number {i} and the word zebra{i}.\n" * 20)
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        assert index.status().pending_vectors == 0
        path = index.db_path
    conn, _ = db.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return settings


@pytest.fixture
def damaged(built: Settings) -> Settings:
    truncate(built.index_path("main"))
    return built


@pytest.mark.parametrize("first", ["search", "catch_up"])
def test_one_shot_search_answers_before_the_vectors_are_embedded_again(
        damaged: Settings, workspace: Path, first: str) -> None:
    with MemoryIndex.open(workspace, config=damaged) as index:
        if first == "catch_up":  # what the CLI and the MCP server do before a search
            assert index.catch_up() == ""
        found = index.searched("zebra5")
        at_reply = index.status()
        assert found.hits[0].path == "memory/2026-01-005.md"
        assert found.mode == "fts-only"  # by keyword, not by the few vectors
        assert at_reply.recovery is not None and at_reply.recovery["reason"]
        # The reply came while chunks still waited for their vectors: it did not wait for
        # the re-embedding ...
        assert at_reply.pending_vectors > 0, at_reply
        # ... which goes on meanwhile, to the last chunk.
        assert wait_for(lambda: index.status().pending_vectors == 0, 600)
        assert wait_for(lambda: (found := index.searched("zebra5")).hits[0].path
                        == "memory/2026-01-005.md" and found.mode == "hybrid"
                        and not found.degraded, 60)


def test_daemon_search_on_a_damaged_index_answers_unavailable_at_once(
        built: Settings, workspace: Path) -> None:
    # What the daemon already did before the heal moved out of index/; kept so it stays so.
    with MemoryIndex.open(workspace, config=built) as index:
        asked: list[str] = []
        index.on_damage = asked.append  # as the daemon sets it: its writer rebuilds
        index.sync()  # the daemon's start-up sync; then the disk fails before any search
        truncate(index.db_path)
        with pytest.raises(UnavailableError, match="being rebuilt"):
            index.search("zebra5")
        assert asked
        assert index.status().recovery is None  # nothing rebuilt on the request thread
