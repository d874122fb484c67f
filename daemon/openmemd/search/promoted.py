"""A fact shown once: a promoted MEMORY.md entry is not returned beside the note it copies.

Deep promotion (dreaming/memory_md.py, OpenClaw's format) copies a note's lines into MEMORY.md as
one entry ending in `[score=… recalls=… avg=… source=<path>:<start>-<end>]`. Once MEMORY.md is cut
by entry (index/blocks.py), a search about that fact finds both the note and its copy, and the copy
takes a result's place from the next note, sometimes the one that answers (docs/benchmarks.md,
"dreaming replayed"). The note's chunk holds every line the entry holds (and the lines around them),
so when both are shown the entry is the one left out. A chunk holding several entries (an older
index's windows) or a line the user wrote is never left out: it says more than one note's lines.

Nor does a copy rank above its note. A promoted entry is a line or two; its note's chunk holds
them among the lines around them, so the short copy can match a question better than the note
(BM25 favours short texts, and so does e5) without saying anything the note does not, and
takes a top-five place from a note that answers.
So the chunks holding an entry's source lines join the candidates with their real scores on
both legs (`fetch_sources`, as a date query's notes do), and each copy ranks right after the
best of them (`rank_after_sources`). A copy whose note cannot be shown ranks by its own scores:
the note is gone (deleted, or never indexed) or does not pass `min_score` (a long day whose
one line answers), and the copy is then what shows the fact.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from openmemd.search.results import ChunkText, LegHit
from openmemd.store.base import CandidateFilter, StoreReader, chunks_of_files
from openmemd.text.promotion import SourceLines, annotated_sources


class _Ranked(ChunkText, Protocol):
    score: float
    gate: float


T = TypeVar("T", bound=ChunkText)
# Chunks read to find the source lines of the copies among one search's candidates.
MAX_SOURCE_CHUNKS = 512


def entry_source(text: str) -> SourceLines | None:
    """The note lines a chunk copies, when the chunk is one promoted entry (its marker,
    heading and a wrapped line may come with it); None otherwise."""
    found = annotated_sources(text)
    return found[0] if len(found) == 1 else None


def shown_once(candidates: Iterable[T], limit: int) -> list[T]:
    """The first `limit` of `candidates` (in order), leaving out each promoted entry whose
    source lines lie inside another candidate shown."""
    shown: list[tuple[T, SourceLines | None]] = []
    for c in candidates:
        source = entry_source(c.text)
        if source is not None and any(_holds(s, source) for s, _ in shown):
            continue  # a copy of lines already shown
        # An entry shown earlier whose source lines this candidate holds is the copy.
        shown = [(s, src) for s, src in shown if src is None or not _holds(c, src)]
        shown.append((c, source))
        if len(shown) >= limit:
            break
    return [s for s, _ in shown]


def _holds(chunk: ChunkText, source: SourceLines) -> bool:
    path, first, last = source
    return chunk.path == path and chunk.start_line <= first and last <= chunk.end_line


def fetch_sources(reader: StoreReader, hits: Iterable[LegHit], *,
                  where: CandidateFilter) -> list[LegHit]:
    """The chunks holding the source lines of the promoted entries among `hits` (scores 0:
    the pipeline scores them like any candidate a leg did not return)."""
    wanted: dict[str, list[SourceLines]] = {}
    for hit in hits:
        source = entry_source(hit.text)
        if source is not None:
            wanted.setdefault(source.path, []).append(source)
    chunks = chunks_of_files(reader, wanted, limit=MAX_SOURCE_CHUNKS, where=where)
    return [LegHit.unscored(c) for c in chunks
            if any(_holds(c, source) for source in wanted.get(c.path, ()))]


def rank_after_sources(candidates: Sequence[_Ranked], min_score: float) -> None:
    """Lower each promoted entry's ranking score to just below the best candidate holding its
    source lines that passes `min_score`, when that one ranks lower (see above)."""
    for c in candidates:
        source = entry_source(c.text)
        if source is None:
            continue
        best = max((s.score for s in candidates
                    if s is not c and s.gate >= min_score and _holds(s, source)), default=None)
        if best is not None and c.score >= best:
            c.score = math.nextafter(best, -math.inf)
