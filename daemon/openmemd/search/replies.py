"""A question at the end of the best hit is answered in the chunk after it.

In a conversation (a chat log kept as a daily note, a transcript) the line that names what a
question asks about is often a question itself ("What are your thoughts on life after
basketball?"), and its reply is the next line. When a chunk ends on that question, the reply
lies in the next chunk of the file (which, by the chunker's overlap, starts on the question
itself), and that next chunk matches the query poorly on both legs: its question is one line
among others about something else, and its reply shares no word with the query.

When the best hit that passes `min_score` ends on a question holding a query term, the next
chunk ranks right after it and passes where it does. Only the best hit's reply: replies after
every hit ending on such a question (a chat has many) pushed as many answers out of the first
five as they brought in (docs/benchmarks.md, "the reply after the best hit's question").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from openmemd.search.focus import asks
from openmemd.search.results import LegHit, LocatedChunk
from openmemd.store.base import CandidateFilter, StoreReader, chunks_of_files
from openmemd.text.tokens import QueryTerms, covered_terms


class _Ranked(LocatedChunk, Protocol):
    score: float
    gate: float
    order: int


C = TypeVar("C", bound=LocatedChunk)
# Chunks read to find the next chunks of the leading hits' files (a day is a handful).
MAX_REPLY_CHUNKS = 256


def asks_at_end(text: str, terms: QueryTerms) -> bool:
    """Whether a chunk's last line is a question holding one of the query's terms."""
    last = next((line for line in reversed(text.split("\n")) if line.strip()), "")
    return asks(last) and bool(covered_terms(terms, last))


def fetch_replies(reader: StoreReader, leading: Iterable[LegHit], terms: QueryTerms, *,
                  where: CandidateFilter) -> list[LegHit]:
    """The next chunks of the `leading` hits that end on a question (scores 0: the pipeline
    scores them like any candidate a leg did not return). Any of them may turn out the best
    hit once the legs are fused."""
    asking = [h for h in leading if asks_at_end(h.text, terms)]
    chunks = chunks_of_files(reader, (h.path for h in asking), limit=MAX_REPLY_CHUNKS,
                             where=where)
    found = {n.id: LegHit.unscored(n) for h in asking
             if (n := next_chunk(h, chunks)) is not None}
    return list(found.values())


def next_chunk(chunk: LocatedChunk, chunks: Sequence[C]) -> C | None:
    """The chunk of `chunks` that continues `chunk` in its file: it starts inside `chunk`
    (the overlap) or on the line after it, and ends after it."""
    after = [c for c in chunks if c.path == chunk.path and c.namespace == chunk.namespace
             and chunk.start_line < c.start_line <= chunk.end_line + 1
             and c.end_line > chunk.end_line]
    return min(after, key=lambda c: c.start_line, default=None)


def rank_reply(candidates: Sequence[_Ranked], terms: QueryTerms, min_score: float) -> None:
    """Rank the chunk after the best passing candidate right after it, when that candidate
    ends on a question holding a query term (see above)."""
    passing = [c for c in candidates if c.gate >= min_score]
    if not passing:
        return
    best = min(passing, key=lambda c: (-c.score, c.order))
    if not asks_at_end(best.text, terms):
        return
    reply = next_chunk(best, candidates)
    if reply is not None and reply.score < best.score:
        reply.score = math.nextafter(best.score, -math.inf)
        reply.gate = max(reply.gate, best.gate)
