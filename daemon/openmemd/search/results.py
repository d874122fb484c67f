"""Search result records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class SearchHit:
    """One result: a chunk of a memory file, its score (0..1) and where to cite it.

    `start_line`/`end_line` are the chunk's range (OpenClaw's shape); `focus_start`/`focus_end`
    the lines inside it that answer best (`search/focus.py`), which the citation names and
    the snippet is centred on. `explain` (only when asked) breaks the score down: the legs
    that found the chunk, each leg's score, fusion, decay, MMR position, evidence and the final
    score.
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
    focus_start: int = 0
    focus_end: int = 0
    # Shown by the relaxed fallback: nothing passed min_score, these are keyword matches
    # offered instead of an answer (pipeline.py), so no recall is recorded for them.
    relaxed: bool = False

@dataclass(frozen=True)
class NearestMiss:
    """The candidate that came closest when nothing passed `min_score`: what a lower
    min_score would show first."""

    score: float
    path: str
    start_line: int
    end_line: int
    citation: str


@dataclass(frozen=True)
class SearchOutcome:
    """What one search found: the hits, and when there are none, the nearest miss."""

    hits: list[SearchHit]
    nearest: NearestMiss | None = None
    mode: str = ""


class ChunkText(Protocol):
    """A chunk's lines and text, as a store, a leg or the pipeline holds them (read only)."""

    @property
    def path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def text(self) -> str: ...


class LocatedChunk(ChunkText, Protocol):
    """A chunk with its id and where it lives."""

    @property
    def id(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def namespace(self) -> str: ...


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

    @classmethod
    def unscored(cls, chunk: LocatedChunk) -> LegHit:
        """A chunk no leg returned (fetched by where it is: a date's notes, a copy's note; or
        a candidate missing one leg), scored later on the legs by id."""
        return cls(id=chunk.id, path=chunk.path, source=chunk.source,
                   start_line=chunk.start_line, end_line=chunk.end_line, text=chunk.text,
                   score=0.0, raw=0.0, namespace=chunk.namespace)
