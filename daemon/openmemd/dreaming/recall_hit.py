"""A search hit as dreaming records it: its own module so that what makes recalls
(`recall`, `agent_corpus`) can share it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RecallHit:
    """One search result as dreaming needs it (a subset of the search API's result)."""

    path: str  # workspace-relative, forward slashes
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: str = "memory"
    # The lines inside the chunk the search found to answer best (its `focus`), 0 = none.
    focus_start: int = 0
    focus_end: int = 0
