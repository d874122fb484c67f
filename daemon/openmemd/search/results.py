"""Search result records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SearchHit:
    """One result: a chunk of a memory file, its score (0..1) and where to cite it.

    `explain` (only when asked) breaks the score down: the legs that found the chunk, each
    leg's score, fusion, decay, MMR position and the final score.
    """

    id: str
    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: str
    citation: str
    explain: dict[str, Any] | None = None
    namespace: str = ""  # which namespace it came from (PostgreSQL); "" on SQLite

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of OpenClaw's memory_search results (camelCase, no chunk id)."""
        out: dict[str, Any] = {
            "path": self.path, "startLine": self.start_line, "endLine": self.end_line,
            "score": round(self.score, 6), "snippet": self.snippet, "source": self.source}
        if self.citation:  # empty when citations are off
            out["citation"] = self.citation
        if self.namespace:  # only a backend with namespaces has one: SQLite replies unchanged
            out["namespace"] = self.namespace
        if self.explain is not None:
            out["explain"] = self.explain
        return out


@dataclass(frozen=True)
class LegHit:
    """A chunk found by one leg (keyword or vector) before fusion.

    `score` is the leg's 0..1 score (keyword: relative BM25; vector: cosine similarity, which
    the pipeline calibrates per model); `raw` is what the leg measured (keyword: the BM25 rank,
    i.e. −relevance; vector: cosine similarity); `coverage` is the fraction of query terms the
    chunk contains (keyword leg; 0 for the vector leg).
    """

    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    score: float
    raw: float
    coverage: float = 0.0
    relevance: float = 0.0  # keyword leg: coverage-weighted BM25 relevance (−rank × ...)
    namespace: str = ""
