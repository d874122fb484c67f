"""Keyword leg: FTS5 BM25 over `chunks_fts`, re-ranked so chunks holding more query terms win.

The MATCH query is an OR of the query's terms plus phrases of adjacent query words (see
`tokens.py`): an AND query misses the answer whenever a question uses one word the note does
not, while plain OR-BM25 lets one rare term outweigh the rest. Each candidate's BM25 relevance
r = −rank is scaled by √(fraction of the query's words it contains), so all-terms matches rank
first without dropping partial ones.

Score: r / (1 + r_top), where r_top is the best candidate's relevance: the best hit gets
OpenClaw's r/(1+r) and the rest scale linearly below it (plain r/(1+r) saturates near 0.9 for
any multi-term match, which left the keyword leg almost no say after fusion: LoCoMo-dev hybrid
hit@5 0.874 → 0.899 with the relative score).
"""

from __future__ import annotations

from collections.abc import Sequence

from openmemd.search.results import LegHit
from openmemd.store.sqlite.db import Connection, OperationalError
from openmemd.store.sqlite.schema import SQL_NOT_DERIVED
from openmemd.text.tokens import QueryTerms, build_match, covered_terms

MAX_CANDIDATES = 200
# How strongly coverage scales relevance: relevance × word_coverage ** COVERAGE_EXPONENT
# (0.5 measured best of 0, 0.5, 1, 2 on LoCoMo-dev; the effect is small either way).
COVERAGE_EXPONENT = 0.5
# FTS5 clamps BM25's IDF to ~1e-6 for a term found in half the chunks or more — in a workspace
# of a few notes, that is every term — so a real match would score 0 and a small memory could
# never answer. A matched chunk's relevance is therefore at least this (before coverage).
RELEVANCE_FLOOR = 0.5


def candidate_count(max_results: int, multiplier: int) -> int:
    """min(200, max(1, max_results × multiplier)) — candidates fetched per leg."""
    return min(MAX_CANDIDATES, max(1, int(max_results * multiplier)))


def _placeholders(n: int) -> str:
    return ", ".join("?" * n)


def fts_query(conn: Connection, match: str, *, limit: int,
              sources: Sequence[str] | None = None, model: str | None = None,
              skip_derived: bool = False) -> list[tuple[str, str, str, int, int, str, float]]:
    """Rows (id, path, source, start_line, end_line, text, bm25 rank) best first.

    Chunk metadata and original text come from `chunks`; an FTS row without its chunk (an
    index caught mid-repair) is skipped. Returns [] if FTS5 is unusable.
    """
    where = ["chunks_fts MATCH ?"]
    params: list[object] = [match]
    if sources:
        where.append(f"source IN ({_placeholders(len(sources))})")
        params.extend(sources)
    if model is not None:
        where.append("model = ?")
        params.append(model)
    if skip_derived:
        where.append(SQL_NOT_DERIVED)
    params.append(limit)
    sql = (
        "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, f.rank "
        "FROM (SELECT id, bm25(chunks_fts) AS rank FROM chunks_fts "
        f"WHERE {' AND '.join(where)} ORDER BY rank LIMIT ?) AS f "
        "JOIN chunks AS c ON c.id = f.id ORDER BY f.rank, c.id"
    )
    try:
        return conn.execute(sql, params).fetchall()
    except OperationalError:
        # No FTS5 table (or a corrupt one): the caller degrades to the vector leg.
        return []


def _weigh(terms: QueryTerms, text: str, rank: float) -> tuple[float, float]:
    """(coverage-weighted BM25 relevance, coverage of all query terms) of one chunk."""
    n_terms = len(terms.all)
    found = covered_terms(terms, text)
    # FTS found the row, so at least one term matched even if our stemmer disagrees.
    coverage = min(1.0, max(len(found), 1) / n_terms) if n_terms else 0.0
    # Rank by word coverage only: CJK queries yield many junk bigrams ("场的"), whose absence
    # says nothing; BM25 already weighs the real ones.
    words = set(terms.words)
    word_coverage = max(len(found & words), 1) / len(words) if words else 1.0
    relevance = max(RELEVANCE_FLOOR, -float(rank))
    return relevance * word_coverage ** COVERAGE_EXPONENT, coverage


def relative_score(relevance: float, top_relevance: float) -> float:
    """r / (1 + r_top): the best hit keeps OpenClaw's r/(1+r); the others scale linearly.

    Plain r/(1+r) saturates (r = 8 and r = 16 give 0.89 and 0.94), so after fusion the
    keyword leg could hardly reorder anything; relative to the best hit it can.
    """
    if relevance <= 0:
        return 0.0
    return min(1.0, relevance / (1.0 + max(top_relevance, relevance)))


def keyword_search(conn: Connection, terms: QueryTerms, *, limit: int,
                   sources: Sequence[str] | None = None, model: str | None = None,
                   skip_derived: bool = False) -> list[LegHit]:
    """The best `limit` chunks for the query terms, by coverage-weighted BM25.

    `LegHit.raw` is the FTS5 bm25 rank; `LegHit.relevance` the weighted relevance.
    """
    match = build_match(terms, op="OR")
    if match is None or limit <= 0:
        return []
    rows = fts_query(conn, match, limit=limit, sources=sources, model=model,
                     skip_derived=skip_derived)
    weighed = [(*_weigh(terms, row[5], row[6]), row) for row in rows]
    top = max((w[0] for w in weighed), default=0.0)
    hits = [LegHit(id=cid, path=path, source=source, start_line=int(start), end_line=int(end),
                   text=text, score=relative_score(relevance, top), raw=float(rank),
                   coverage=coverage, relevance=relevance)
            for relevance, coverage, (cid, path, source, start, end, text, rank) in weighed]
    hits.sort(key=lambda h: (-h.score, h.raw, h.id))
    return hits


def keyword_scores_for(conn: Connection, terms: QueryTerms, chunks: Sequence[LegHit], *,
                       top_relevance: float) -> dict[str, tuple[float, float, float]]:
    """{id: (score, bm25 rank, coverage)} for chunks the keyword leg did not return.

    Fusion would otherwise count a chunk just outside the keyword candidates as a keyword
    score of 0. Chunks without any query term are absent from the result.
    """
    match = build_match(terms, op="OR")
    if match is None or not chunks:
        return {}
    texts = {c.id: c.text for c in chunks}
    ids = list(texts)
    try:
        rows = conn.execute(
            "SELECT id, bm25(chunks_fts) FROM chunks_fts "
            f"WHERE chunks_fts MATCH ? AND id IN ({_placeholders(len(ids))})", [match, *ids],
        ).fetchall()
    except OperationalError:
        return {}
    out = {}
    for cid, rank in rows:
        relevance, coverage = _weigh(terms, texts[cid], rank)
        out[cid] = (relative_score(relevance, top_relevance), float(rank), coverage)
    return out
