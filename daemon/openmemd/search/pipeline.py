"""The search pipeline: legs → fusion → temporal decay → MMR → threshold → top K.

Entry point::

    search_outcome(reader, query, *, query_vector, model, settings, max_results, min_score,
                   sources, now, explain=False) -> SearchOutcome  (hits, nearest miss, mode)

(`run_search`, same arguments, returns the hits alone.)

- `reader`: the index's `store.base.StoreReader` (candidates, scores by id, file mtimes).
- `query_vector`: the query's embedding (float32; normalised here, once) or None.
- `model`: the current embedding model; chunks of other models are ignored by the vector leg.
  "fts-only" (or no `query_vector`) selects keyword-only mode.
- `settings`: `config.QuerySettings` (hybrid, MMR and temporal decay settings).
- `sources`: restrict to these sources ("memory", "sessions"); None = all.
- `now`: Unix time, for temporal decay (ages from dated file names or the indexed mtimes).
- `explain`: attach a score breakdown to every hit.
- `dates`: the query's dates (`search/dates/query.py`) or None: the legs search the query without
  them, the range's dated notes join the candidates and rank first or get a boost (dated.py).

Modes:
- **hybrid** (a query vector, hybrid enabled, both legs found something): union by chunk id;
  a candidate missing from one leg's list gets its real score on that leg (looked up by id)
  instead of 0; weighted fusion of the calibrated vector score and the keyword score (a
  chunk holding one ordinary word of several ranks by its vector score alone, evidence.py; a
  chunk with no vector yet, pending, by its keyword score alone), or
  reciprocal-rank fusion, ordered by RRF and gated by the weighted score so `min_score` keeps
  its meaning,
  then decay and MMR (both opt-in), then `score ≥ min_score`, then top K. If nothing passes,
  the relaxed fallback keeps keyword-leg hits whose keyword score is
  ≥ min(min_score, text_weight) and that hold at least half of the query's information
  (IDF-weighted), so exact lexical hits are not lost but one shared word does not defeat the
  threshold.
- **vector-only** (hybrid disabled, or the keyword leg found nothing): score = calibrated
  cosine.
- **keyword-only** (no provider, or no vectors found): keyword score plus OpenClaw's lexical
  boosts; `min_score` is soft (if nothing passes, the best hits are returned anyway).

The chunk after the best hit, when that hit ends on a question about the query, ranks right
after it (`replies.py`): in a conversation the answer is the next line.

In every mode a search returns nothing unless its best candidate's evidence (`evidence.py`:
words and meaning together -- the mean of the calibrated vector score and the share of the
query's terms the chunk holds, weighted by IDF and by specificity in general English, nothing
for one ordinary word of several -- or meaning that stands out from the query's median
candidate) reaches `min_score`: the scores above rank, the evidence says whether the
memory holds anything for the query at all. When nothing passes, the outcome names the nearest miss.
Each hit carries its focus (`focus.py`), the lines of its chunk that answer best.
"""

from __future__ import annotations

import contextvars
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import NamedTuple, TypeVar

import numpy as np
from numpy.typing import NDArray

from openmemd.config import QuerySettings
from openmemd.search.candidate import Candidate as _Candidate
from openmemd.search.candidate import (
    join_candidates,
    joining_chunks,
    outcome,
    query_evidence,
    weigh_evidence,
)
from openmemd.search.dated import (
    apply_dates,
    dated_evidence,
    fetch_dated,
    judge_dates,
    keyword_scored,
    without_memory_words,
)
from openmemd.search.dates.query import DateQuery
from openmemd.search.decay import DecayCalculator, uses_mtime
from openmemd.search.evidence import MAJORITY
from openmemd.search.keyword import candidate_count, keyword_scores_for, keyword_search
from openmemd.search.mmr import iter_mmr
from openmemd.search.promoted import fetch_sources, rank_after_sources, shown_once
from openmemd.search.replies import fetch_replies, rank_reply
from openmemd.search.results import LegHit, SearchHit, SearchOutcome
from openmemd.search.scoring import (
    calibration_for,
    lexical_boost_score,
    normalise_weights,
    rrf_fusion,
    weighted_fusion,
)
from openmemd.search.vector import normalise_query, vector_search
from openmemd.store.base import FTS_ONLY_MODEL, CandidateFilter, StoreReader
from openmemd.text.tokens import QueryTerms, query_terms, text_units

T = TypeVar("T")
RELAXED_MIN_EVIDENCE = MAJORITY  # keyword evidence a keyword hit needs for the relaxed fallback


def run_search(reader: StoreReader, query: str, *, query_vector: NDArray[np.float32] | None,
               model: str, settings: QuerySettings, max_results: int, min_score: float,
               sources: Sequence[str] | None, now: float,
               explain: bool = False, dates: DateQuery | None = None) -> list[SearchHit]:
    """The hits of `search_outcome`."""
    return search_outcome(reader, query, query_vector=query_vector, model=model,
                          settings=settings, max_results=max_results, min_score=min_score,
                          sources=sources, now=now, explain=explain, dates=dates).hits


def search_outcome(reader: StoreReader, query: str, *,
                   query_vector: NDArray[np.float32] | None, model: str,
                   settings: QuerySettings, max_results: int, min_score: float,
                   sources: Sequence[str] | None, now: float, explain: bool = False,
                   dates: DateQuery | None = None, asked: str | None = None) -> SearchOutcome:
    """Search the index; see the module docstring. `asked`: the words an answer must show,
    when fewer than those searched (a date no note is from: searched for, not required)."""
    text = (query or "").strip()
    if not text or max_results <= 0:
        return SearchOutcome([])
    if dates is not None:
        text = dates.query  # may be empty: "2023-03-27" asks for the day alone
    min_score = min(1.0, max(0.0, min_score)) if math.isfinite(min_score) else 0.0
    hybrid = settings.hybrid
    n_candidates = candidate_count(max_results, hybrid.candidate_multiplier)
    terms = query_terms(text)
    needed = terms if asked is None else query_terms(asked)
    if dates is not None or asked is not None:  # a date question (asked: one no note is near)
        terms, needed = without_memory_words(terms), without_memory_words(needed)
    search = _Search(reader, terms, needed, settings, dates, min_score, max_results, now, explain)
    src = list(sources) if sources else None
    keyword_where = CandidateFilter.of_search(sources, derived=settings.dreaming_reports)
    dated = (fetch_dated(reader, dates, limit=n_candidates, where=keyword_where)
             if dates is not None else [])

    vector_hits: list[LegHit] = []
    q = None  # the query vector, normalised once: the store gets a unit vector
    keyword_leg = _KeywordLeg(reader, terms, limit=n_candidates, where=keyword_where)
    if query_vector is not None and model != FTS_ONLY_MODEL:
        q = normalise_query(query_vector)
        if hybrid.enabled:
            keyword_leg.start()  # alongside the vector leg when the reader allows
        vector_hits = vector_search(reader, q, model=model, limit=n_candidates, sources=src,
                                    skip_derived=keyword_where.skip_derived)
    if not vector_hits:
        hits = keyword_leg.hits()
        copied = fetch_sources(reader, [*hits, *dated], where=keyword_where)
        replies = fetch_replies(reader, hits[:max_results], terms, where=keyword_where)
        return _keyword_only(search, hits, joining_chunks(dated, copied, replies))

    assert q is not None  # the vector leg found something
    calibrate = calibration_for(model)
    keyword_hits = keyword_leg.hits() if hybrid.enabled else []
    copied = fetch_sources(reader, [*vector_hits, *keyword_hits, *dated], where=keyword_where)
    replies = fetch_replies(reader, [*vector_hits[:max_results], *keyword_hits[:max_results]],
                            terms, where=keyword_where)
    joining = joining_chunks(dated, copied, replies)
    legs = _VectorLegs(vector_hits, keyword_hits, q, model, calibrate)
    if not keyword_hits:
        return _vector_only(search, legs, joining)
    return _hybrid(search, legs, joining)


class _Search(NamedTuple):
    """One search as every step after its legs reads it."""

    reader: StoreReader
    terms: QueryTerms  # the words searched
    needed: QueryTerms  # the words an answer must show
    settings: QuerySettings
    dates: DateQuery | None
    min_score: float  # clamped to [0, 1]
    max_results: int
    now: float
    explain: bool


class _VectorLegs(NamedTuple):
    """What the legs found when the vector leg found something."""

    vector_hits: list[LegHit]
    keyword_hits: list[LegHit]  # none when hybrid is off
    q: NDArray[np.float32]  # the query vector, normalised
    model: str
    calibrate: Callable[[float], float]


def _vector_only(search: _Search, legs: _VectorLegs,
                 joining: dict[str, tuple[str, LegHit]]) -> SearchOutcome:
    candidates = []
    for position, hit in enumerate(legs.vector_hits):
        c = _Candidate.from_leg(hit)
        c.order = position
        c.vector_cosine, c.vector_score = hit.raw, legs.calibrate(hit.raw)
        c.score = c.gate = c.vector_score
        c.legs = ("vector",)
        candidates.append(c)
    joined = join_candidates(candidates, joining)
    _fill_missing_legs(search.reader, joined, search.terms, [], q=legs.q, model=legs.model,
                       calibrate=legs.calibrate)
    for c in joined:
        c.score = c.gate = c.vector_score or 0.0
    ordered, passed, weights = _rank(search, candidates, legs.calibrate)
    return outcome(ordered, passed, search.needed, weights, "vector-only", search.explain,
                   relaxed=False)


def _hybrid(search: _Search, legs: _VectorLegs,
            joining: dict[str, tuple[str, LegHit]]) -> SearchOutcome:
    candidates = _fuse(legs.vector_hits, legs.keyword_hits, legs.calibrate)
    join_candidates(candidates, joining)
    _fill_missing_legs(search.reader, candidates, search.terms, legs.keyword_hits, q=legs.q,
                       model=legs.model, calibrate=legs.calibrate)

    def score(fused: list[_Candidate]) -> None:
        _score_fused(fused, legs.vector_hits, legs.keyword_hits, search.settings)

    ordered, passed, weights = _rank(search, candidates, legs.calibrate, score=score)
    relaxed = False
    if not passed:
        passed = _keyword_matches(ordered, search)
        relaxed = bool(passed)
    return outcome(ordered, passed, search.needed, weights, "hybrid", search.explain,
                   relaxed=relaxed)


def _keyword_matches(ordered: list[_Candidate], search: _Search) -> list[_Candidate]:
    """Hybrid's relaxed fallback when nothing passed: the exact keyword matches.

    OpenClaw #29112: an exact keyword match must not vanish because its vector score is low.
    Judge those hits by their own keyword score against a gentler threshold, and only if they
    hold at least half the query's terms: the best keyword hit always scores high relative to
    the rest, so without that check any shared word ("group") would defeat min_score and
    nothing could ever be "not found" (#147349). That half is weighed by IDF (evidence.py):
    "decide" is not half of "decide kubernetes".
    """
    hybrid = search.settings.hybrid
    _vw, tw = normalise_weights(hybrid.vector_weight, hybrid.text_weight)
    floor = min(search.min_score, tw)
    return [c for c in ordered if "keyword" in c.legs
            and c.keyword_score is not None and c.keyword_score >= floor
            and c.keyword_evidence >= RELAXED_MIN_EVIDENCE][:search.max_results]


def _rank(search: _Search, candidates: list[_Candidate],
          calibrate: Callable[[float], float] | None = None, *,
          score: Callable[[list[_Candidate]], None] | None = None
          ) -> tuple[list[_Candidate], list[_Candidate], dict[str, float]]:
    """The steps every mode takes once its candidates are scored: dates judged, evidence
    weighed, `score` (hybrid's fusion, which reads the evidence's coincidental words), decay,
    dates applied, the ranks of promoted copies and replies, order and threshold; and no hit
    at all unless the query's evidence reaches min_score. Returns (candidates in order, those
    that pass, the query terms' weights)."""
    judge_dates(candidates, search.dates)
    weights = weigh_evidence(candidates, search.needed, calibrate)
    if score is not None:
        score(candidates)
    _apply_decay(search.reader, candidates, search.settings, search.now)
    apply_dates(candidates)
    dated_evidence(candidates)
    rank_after_sources(candidates, search.min_score)
    rank_reply(candidates, search.terms, search.min_score)
    ordered, passed = _order(candidates, search.settings, min_score=search.min_score,
                             max_results=search.max_results)
    if query_evidence(candidates) < search.min_score:
        passed = []
    return ordered, passed, weights


class _KeywordLeg:
    """The keyword leg, run in the calling thread when asked for, or started early on a worker
    thread when the reader is `thread_safe`: a server-backed store then answers both legs at
    once (on PostgreSQL at 1M chunks, each leg takes ~10 ms of server time)."""

    def __init__(self, reader: StoreReader, terms: QueryTerms, *, limit: int,
                 where: CandidateFilter) -> None:
        self._run = functools.partial(keyword_search, reader, terms, limit=limit, where=where)
        self._thread_safe = reader.thread_safe
        self._future: Future[list[LegHit]] | None = None

    def start(self) -> None:
        if self._thread_safe and self._future is None:
            self._future = _beside(self._run)

    def hits(self) -> list[LegHit]:
        return self._run() if self._future is None else self._future.result()


# Threads for the keyword calls a search makes beside its vector calls (the leg, then the scores
# of the vector leg's hits); a search waits only for its own, and no task waits for another, so
# a handful covers the daemon's concurrent searches (more just queue for a moment).
_LEG_WORKERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="openmemd-keyword-leg")


def _beside(call: Callable[[], T]) -> Future[T]:
    """`call` on a leg thread, with the caller's context (structlog's bound request id)."""
    return _LEG_WORKERS.submit(contextvars.copy_context().run, call)


def _fuse(vector_hits: list[LegHit], keyword_hits: list[LegHit],
          calibrate: Callable[[float], float]) -> list[_Candidate]:
    """Union of both legs' candidates by chunk id, with each leg's score where it has one."""
    by_id: dict[str, _Candidate] = {}
    for hit in vector_hits:
        c = by_id.setdefault(hit.id, _Candidate.from_leg(hit))
        c.vector_cosine, c.vector_score = hit.raw, calibrate(hit.raw)
        c.legs = ("vector",)
    for hit in keyword_hits:
        c = by_id.setdefault(hit.id, _Candidate.from_leg(hit))
        c.keyword_score, c.bm25_rank, c.coverage = hit.score, hit.raw, hit.coverage
        c.legs = (*c.legs, "keyword")
    return list(by_id.values())


def _fill_missing_legs(reader: StoreReader, candidates: list[_Candidate], terms: QueryTerms,
                       keyword_hits: list[LegHit], *, q: NDArray[np.float32], model: str,
                       calibrate: Callable[[float], float]) -> None:
    """Score each candidate on the leg that did not return it, instead of counting 0.

    A chunk just outside one leg's top candidates is not unrelated on that leg; with the
    missing score at 0 (OpenClaw) a strong keyword match the vector leg ranked 25th loses to
    any vector-only hit. Vectors are read by id (no scan); keyword scores come from the same
    keyword query as the keyword leg, restricted to those ids.
    """
    no_keyword = [c for c in candidates if c.keyword_score is None]
    keyword_scores: Future[dict[str, tuple[float, float, float]]] | None = None
    if no_keyword:
        top = max((h.relevance for h in keyword_hits), default=0.0)
        chunks = [LegHit.unscored(c) for c in no_keyword]
        score = functools.partial(keyword_scores_for, reader, terms, chunks, top_relevance=top)
        if reader.thread_safe:  # beside the cosines below: two round trips at once
            keyword_scores = _beside(score)
        else:
            _set_keyword_scores(no_keyword, score())
    no_vector = [c for c in candidates if c.vector_score is None]
    if no_vector:
        sims = reader.cosines(q, [c.id for c in no_vector], model=model)
        for c in no_vector:
            if c.id in sims:
                c.vector_cosine, c.vector_score = sims[c.id], calibrate(sims[c.id])
    if keyword_scores is not None:
        _set_keyword_scores(no_keyword, keyword_scores.result())


def _set_keyword_scores(candidates: list[_Candidate],
                        scores: dict[str, tuple[float, float, float]]) -> None:
    for c in candidates:
        if c.id in scores:
            c.keyword_score, c.bm25_rank, c.coverage = scores[c.id]


def _score_fused(candidates: list[_Candidate], vector_hits: list[LegHit],
                 keyword_hits: list[LegHit], settings: QuerySettings) -> None:
    hybrid = settings.hybrid
    vector_scores = {c.id: c.vector_score for c in candidates if c.vector_score is not None}
    text_scores = {c.id: c.keyword_score for c in candidates if c.keyword_score is not None}
    # A chunk sharing one ordinary word of several with the query (evidence.coincidental)
    # ranks by its meaning alone: the keyword score is relative to the best keyword hit, so
    # the chunk holding "code" once outranked the one fact that answers "favourite coding
    # language for fresh code" with no word in common.
    chance = {c.id for c in candidates if c.coincidental}
    ranking_text = {i: s for i, s in text_scores.items() if i not in chance}
    # A chunk with no vector yet (pending after a restart mid-rebuild: the store had none to
    # look up) is fused on its keyword leg alone, not on a meaning of 0 that any chunk of
    # weak meaning outranks; having nothing else, a coincidental word passes nothing.
    pending = {c.id for c in candidates if c.vector_score is None}
    gate_text = {i: s for i, s in text_scores.items() if i not in chance or i not in pending}
    weighted = weighted_fusion(vector_scores, gate_text, hybrid.vector_weight,
                               hybrid.text_weight, vectorless=pending)
    if hybrid.fusion == "rrf":
        # Ranks are those of the legs' own candidate lists (filled-in scores do not rank).
        ranked = rrf_fusion([h.id for h in vector_hits],
                            [h.id for h in keyword_hits if h.id not in chance],
                            hybrid.vector_weight, hybrid.text_weight, k=hybrid.rrf_k,
                            vectorless=pending)
    elif chance:
        ranked = weighted_fusion(vector_scores, ranking_text, hybrid.vector_weight,
                                 hybrid.text_weight, vectorless=pending)
    else:
        ranked = weighted
    for c in candidates:
        c.score, c.gate = ranked.get(c.id, 0.0), weighted.get(c.id, 0.0)


def _apply_decay(reader: StoreReader, candidates: list[_Candidate], settings: QuerySettings,
                 now: float) -> None:
    decay = settings.temporal_decay
    if not decay.enabled:
        return
    # Only files that age by mtime are looked up: one query, none when all are dated notes.
    aging = sorted({c.path for c in candidates if uses_mtime(c.path, c.source)})
    calc = DecayCalculator(reader.file_mtimes(aging) if aging else {}, now,
                           decay.half_life_days)
    for c in candidates:
        c.age_days = calc.age(c.path, c.source)
        c.decay = calc.multiplier(c.path, c.source)
        c.score *= c.decay
        c.gate *= c.decay


def _order(candidates: list[_Candidate], settings: QuerySettings, *, min_score: float,
           max_results: int) -> tuple[list[_Candidate], list[_Candidate]]:
    """(candidates in final order, the first `max_results` of them passing `min_score`).

    MMR runs over all candidates (before the threshold), lazily: it stops once enough
    passing candidates are chosen, and the rest follow in score order.
    """
    ordered = sorted(candidates, key=lambda c: (-c.score, c.order, c.id))
    if settings.mmr.enabled and len(ordered) > 1:
        picked: list[_Candidate] = []
        taken = set()

        def picks() -> Iterator[_Candidate]:
            for position, i in enumerate(iter_mmr([c.score for c in ordered],
                                                  [c.text for c in ordered],
                                                  settings.mmr.lambda_), 1):
                c = ordered[i]
                c.mmr_position = position
                picked.append(c)
                taken.add(i)
                if c.gate >= min_score:
                    yield c

        passed = shown_once(picks(), max_results)
        rest = [c for i, c in enumerate(ordered) if i not in taken]
        return picked + rest, passed
    # A promoted entry beside the note it copies is left out (promoted.py).
    return ordered, shown_once((c for c in ordered if c.gate >= min_score), max_results)


def _keyword_only(search: _Search, hits: list[LegHit],
                  joining: dict[str, tuple[str, LegHit]]) -> SearchOutcome:
    distinct = set(search.terms.all)
    n_keyword = len(hits)
    hits = hits + keyword_scored(search.reader, search.terms, hits,
                                 [h for _, h in joining.values()])
    candidates = []
    for position, hit in enumerate(hits):
        c = _Candidate.from_leg(hit)
        c.order = position
        c.legs = ("keyword",) if position < n_keyword else (joining[hit.id][0],)
        c.keyword_score, c.bm25_rank, c.coverage = hit.score, hit.raw, hit.coverage
        units = text_units(hit.text)
        found = hit.coverage * len(distinct)
        path_lower = hit.path.lower()
        c.score = c.gate = lexical_boost_score(
            hit.score, coverage=hit.coverage,
            overlap=found / len(units) if units else 0.0,
            path_hits=sum(1 for t in distinct if t in path_lower),
            text_length=len(hit.text))
        candidates.append(c)
    ordered, passed, weights = _rank(search, candidates)
    relaxed = False
    if not passed and query_evidence(candidates) >= search.min_score:
        # soft threshold: keyword-only scores are heuristics, not evidence
        passed, relaxed = ordered[:search.max_results], bool(ordered)
    return outcome(ordered, passed, search.needed, weights, "keyword-only", search.explain,
                   relaxed=relaxed)
