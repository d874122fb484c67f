"""Keyword leg: the store's keyword relevance, re-ranked so chunks holding more query terms win.

The store matches any of the query's terms (plus phrases of adjacent query words, see
`text/tokens.py`): requiring all terms misses the answer whenever a question uses one word the
note does not, while plain relevance lets one rare term outweigh the rest. Each candidate's
relevance r (the store's measure, e.g. −BM25 rank) is scaled by √(fraction of the query's
words it contains × fraction of them one of its lines holds), so all-terms matches rank first
without dropping partial ones, and words told together beat the same words scattered over the
chunk: a line is one turn of a chat, one bullet of a note, and the question's words in one of
them are about one thing ("Caroline: the adoption agency called" for "Caroline's adoption
agency", not "Caroline: hi" ... "Melanie: the agency" ... "adoption"). Term proximity, as
classic IR weighs it, at the grain the notes are written in (docs/benchmarks.md, "the
question's words in one line").

Score: r / (1 + r_top), where r_top is the best candidate's relevance: the best hit gets
OpenClaw's r/(1+r) and the rest scale linearly below it, because plain r/(1+r) saturates near
0.9 for any multi-term match and leaves the keyword leg almost no say after fusion
(docs/benchmarks.md, "Figures behind the code's choices").
"""

from __future__ import annotations

from collections.abc import Sequence

from openmemd.search.results import LegHit
from openmemd.store.base import CandidateFilter, StoreReader
from openmemd.text.tokens import QueryTerms, covered_terms

MAX_CANDIDATES = 200
# How strongly coverage scales relevance: relevance × (word coverage × line coverage) **
# COVERAGE_EXPONENT; the best of those tried, by a small margin (docs/benchmarks.md).
COVERAGE_EXPONENT = 0.5
# A store's BM25 may clamp IDF to ~1e-6 for a term found in half the chunks or more — in a
# workspace of a few notes, that is every term — so a real match would score 0 and a small
# memory could never answer. A matched chunk's relevance is therefore at least
# this (before coverage).
RELEVANCE_FLOOR = 0.5
ANY_CHUNK = CandidateFilter()  # no filter


def candidate_count(max_results: int, multiplier: int) -> int:
    """min(200, max(1, max_results × multiplier)) — candidates fetched per leg."""
    return min(MAX_CANDIDATES, max(1, int(max_results * multiplier)))


def _weigh(terms: QueryTerms, text: str, measure: float) -> tuple[float, float]:
    """(coverage-weighted relevance, coverage of all query terms) of one chunk, from the
    store's relevance `measure`."""
    n_terms = len(terms.all)
    found = covered_terms(terms, text)
    # The store found the row, so at least one term matched even if our stemmer disagrees.
    coverage = min(1.0, max(len(found), 1) / n_terms) if n_terms else 0.0
    # Rank by word coverage only: CJK queries yield many junk bigrams ("场的"), whose absence
    # says nothing; BM25 already weighs the real ones.
    words = set(terms.words)
    if not words:
        return max(RELEVANCE_FLOOR, float(measure)), coverage
    held = found & words
    word_coverage = max(len(held), 1) / len(words)
    line_coverage = max(_most_in_one_line(terms, text, held), 1) / len(words)
    relevance = max(RELEVANCE_FLOOR, float(measure))
    return relevance * (word_coverage * line_coverage) ** COVERAGE_EXPONENT, coverage


def _most_in_one_line(terms: QueryTerms, text: str, held: set[str]) -> int:
    """The most of the query's words `held` by the chunk that one of its lines holds."""
    if len(held) <= 1:
        return len(held)  # one word is always in one line
    only = QueryTerms(tuple(w for w in terms.words if w in held), ())
    best = 0
    for line in text.split("\n"):
        if line.strip():
            best = max(best, len(covered_terms(only, line)))
            if best == len(held):
                break
    return best


def relative_score(relevance: float, top_relevance: float) -> float:
    """r / (1 + r_top): the best hit keeps OpenClaw's r/(1+r); the others scale linearly.

    Plain r/(1+r) saturates (r = 8 and r = 16 give 0.89 and 0.94), so after fusion the
    keyword leg could hardly reorder anything; relative to the best hit it can.
    """
    if relevance <= 0:
        return 0.0
    return min(1.0, relevance / (1.0 + max(top_relevance, relevance)))


def keyword_search(reader: StoreReader, terms: QueryTerms, *, limit: int,
                   where: CandidateFilter = ANY_CHUNK) -> list[LegHit]:
    """The best `limit` chunks for the query terms, by coverage-weighted relevance.

    `LegHit.raw` is the BM25 rank (−relevance, as `explain`'s `bm25Rank` has always shown);
    `LegHit.relevance` the weighted relevance.
    """
    if limit <= 0:
        return []
    found = reader.keyword_candidates(terms, limit=limit, where=where)
    weighed = [(*_weigh(terms, c.text, c.measure), c) for c in found]
    top = max((w[0] for w in weighed), default=0.0)
    hits = [LegHit(id=c.id, path=c.path, source=c.source, start_line=c.start_line,
                   end_line=c.end_line, text=c.text, score=relative_score(relevance, top),
                   raw=-c.measure, coverage=coverage, relevance=relevance,
                   namespace=c.namespace)
            for relevance, coverage, c in weighed]
    hits.sort(key=lambda h: (-h.score, h.raw, h.id))
    return hits


def keyword_scores_for(reader: StoreReader, terms: QueryTerms, chunks: Sequence[LegHit], *,
                       top_relevance: float) -> dict[str, tuple[float, float, float]]:
    """{id: (score, bm25 rank, coverage)} for chunks the keyword leg did not return.

    Fusion would otherwise count a chunk just outside the keyword candidates as a keyword
    score of 0. Chunks without any query term are absent from the result.
    """
    if not chunks:
        return {}
    texts = {c.id: c.text for c in chunks}
    out = {}
    for cid, measure in reader.keyword_relevance(terms, list(texts)).items():
        if cid not in texts:
            continue
        relevance, coverage = _weigh(terms, texts[cid], measure)
        out[cid] = (relative_score(relevance, top_relevance), -measure, coverage)
    return out
