"""A chunk on its way through the search pipeline, and what a search returns of it: the hit
(score, focus-centred snippet, citation of the focus, explain) or, when nothing passed, the
nearest miss. Evidence (evidence.py) is weighed here, over all candidates of one search.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openmemd.search.evidence import (
    coincidental,
    corpus_idf,
    evidence,
    in_another_sense,
    keyword_evidence,
    lone_generic_heads,
    median,
    term_weights,
    without_lone_heads,
)
from openmemd.search.focus import Focus, focus_of, line_terms
from openmemd.search.results import LegHit, NearestMiss, SearchHit, SearchOutcome
from openmemd.search.snippets import citation, make_snippet
from openmemd.text.tokens import QueryTerms, covered_terms


@dataclass
class Candidate:
    """A chunk on its way through the pipeline (mutable on purpose: stages fill it in)."""

    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    score: float = 0.0  # ranking score (fused, then decayed)
    gate: float = 0.0  # what min_score is compared with (weighted evidence, decayed)
    vector_score: float | None = None
    vector_cosine: float | None = None
    keyword_score: float | None = None
    bm25_rank: float | None = None
    coverage: float | None = None
    decay: float = 1.0
    age_days: float | None = None
    mmr_position: int | None = None
    order: int = 0  # tie-break: position in the leg(s) that found it
    legs: tuple[str, ...] = ()  # the legs whose candidates included it
    namespace: str = ""  # where the chunk lives (a backend with namespaces)
    found: frozenset[str] = frozenset()  # the query terms the chunk holds
    keyword_evidence: float = 0.0
    coincidental: bool = False  # its words are one ordinary word of several (evidence.py)
    evidence: float = 0.0  # evidence.py: whether this chunk shows the memory holds an answer
    date: dict[str, Any] | None = None  # what the query's dates did to it (`explain`)

    @classmethod
    def from_leg(cls, hit: LegHit) -> Candidate:
        return cls(hit.id, hit.path, hit.source, hit.start_line, hit.end_line, hit.text,
                   namespace=hit.namespace)


def joining_chunks(dated: list[LegHit], copied: list[LegHit],
                   replies: list[LegHit]) -> dict[str, tuple[str, LegHit]]:
    """Chunks no leg returned that join with their real scores, by id, with what brought
    them (`explain`'s legs): the notes of the query's dates (dated.py), the notes promoted
    entries copy (promoted.py), the chunks after leading hits ending on a question
    (replies.py)."""
    joining: dict[str, tuple[str, LegHit]] = {}
    for leg, hits in (("date", dated), ("source", copied), ("reply", replies)):
        for hit in hits:
            joining.setdefault(hit.id, (leg, hit))
    return joining


def join_candidates(candidates: list[Candidate], joining: dict[str, tuple[str, LegHit]]
          ) -> list[Candidate]:
    """Add the `joining` chunks the legs did not find; the ones added."""
    have = {c.id for c in candidates}
    joined: list[Candidate] = []
    for leg, hit in joining.values():
        if hit.id not in have:
            c = Candidate.from_leg(hit)
            c.order, c.legs = len(candidates) + len(joined), (leg,)
            joined.append(c)
    candidates.extend(joined)
    return joined


def weigh_evidence(candidates: list[Candidate], terms: QueryTerms,
                   calibrate: Callable[[float], float] | None = None) -> dict[str, float]:
    """Each candidate's evidence (evidence.py), with IDF over all candidates and the
    `calibrate`d cosine of the median candidate as the query's own baseline; returns the
    query terms' IDF over the candidates, which the focus weighs lines by."""
    for c in candidates:
        c.found = frozenset(covered_terms(terms, c.text))
    idf = corpus_idf(terms.all, (c.found for c in candidates))
    weights = term_weights(idf)
    words = frozenset(terms.words)
    heads = lone_generic_heads(terms.phrases, terms.words)
    cosines = [c.vector_cosine for c in candidates if c.vector_cosine is not None]
    for c in candidates:
        c.keyword_evidence = keyword_evidence(c.found, weights)
        # A date the query names is one more part of the question, held by the notes of its
        # range ("where did Joanna travel in July 2022": Joanna's July note holds two parts).
        asked = len(words) + (c.date is not None)
        in_range = bool(c.date and c.date.get("inRange"))
        c.coincidental = coincidental(len(c.found & words) + in_range, asked,
                                      c.keyword_evidence)
        # Whether the words show an answer at all: a generic head without its modifier
        # ("type" for "blood type") is none of them; the chunk still ranks by all it holds.
        telling = without_lone_heads(c.found, heads)
        shown = c.keyword_evidence
        if c.coincidental or (telling != c.found and coincidental(
                len(telling & words) + in_range, asked, keyword_evidence(telling, weights))):
            shown = 0.0
        if c.coincidental:
            c.keyword_evidence = 0.0  # only the chunk's meaning may show it answers
        baseline = 1.0  # no vector leg: the meaning-alone reading does not apply
        if calibrate is not None and c.vector_cosine is not None:
            # The median of the *other* candidates: a chunk is not its own baseline. With
            # none to compare with (a workspace of one note), the calibration's own
            # "unrelated" level, 0, is the baseline.
            mid = median(_without(cosines, c.vector_cosine))
            baseline = 0.0 if mid is None else calibrate(mid)
        c.evidence = evidence(c.vector_score, shown, baseline)
        if in_another_sense(c.vector_score, c.keyword_evidence, baseline):
            # Nor may they pass as an exact keyword match (pipeline.py's relaxed fallback):
            # "both blood and the ones we choose" is no match for "Caroline's blood type".
            c.keyword_evidence = 0.0
    return idf


def _without(values: list[float], value: float) -> list[float]:
    """`values` less one occurrence of `value`."""
    rest = list(values)
    rest.remove(value)
    return rest


def query_evidence(candidates: list[Candidate]) -> float:
    return max((c.evidence for c in candidates), default=0.0)


def outcome(ordered: list[Candidate], passed: list[Candidate], terms: QueryTerms,
            weights: dict[str, float], mode: str, explain: bool, *,
            relaxed: bool) -> SearchOutcome:
    """The hits, or when there are none, the candidate a lower min_score would show first:
    a candidate passes when its own score and the query's evidence both reach min_score."""
    best_evidence = query_evidence(ordered)
    hits = [to_hit(c, mode, explain, terms, weights, relaxed=relaxed,
                   query_evidence=best_evidence) for c in passed]
    nearest = None
    if not hits and ordered:
        best = max(ordered, key=lambda c: min(c.gate, best_evidence))
        focus = _focus(best, terms, weights)
        # Rounded down: "lower --min-score to see it" must show it at the score named (rounded
        # to nearest, 0.2811648 was named 0.281165, and a search at 0.281165 showed nothing).
        shown_at = math.floor(max(0.0, min(best.gate, best_evidence, 1.0)) * 1e6) / 1e6
        nearest = NearestMiss(shown_at,
                              best.path, focus.start_line, focus.end_line,
                              citation(best.path, focus.start_line, focus.end_line))
    return SearchOutcome(hits, nearest, mode)


def _focus(c: Candidate, terms: QueryTerms, weights: dict[str, float]) -> Focus:
    return focus_of(c.start_line, c.end_line,
                    line_terms(c.text, lambda line: covered_terms(terms, line)), weights,
                    c.text.split("\n"))


def to_hit(c: Candidate, mode: str, explain: bool, terms: QueryTerms,
           weights: dict[str, float], *, relaxed: bool, query_evidence: float) -> SearchHit:
    score = round(min(1.0, max(0.0, c.score)), 6)
    focus = _focus(c, terms, weights)
    details: dict[str, Any] | None = None
    if explain:
        details = {
            "mode": mode,
            "legs": list(c.legs),
            "vectorScore": c.vector_score,
            "vectorCosine": c.vector_cosine,
            "keywordScore": c.keyword_score,
            "bm25Rank": c.bm25_rank,
            "coverage": c.coverage,
            "gateScore": c.gate,
            "decay": c.decay,
            "ageDays": c.age_days,
            "mmrPosition": c.mmr_position,
            "relaxed": relaxed,
            "keywordEvidence": c.keyword_evidence,
            "evidence": c.evidence,
            "queryEvidence": query_evidence,
            "score": score,
            **({"date": c.date} if c.date is not None else {}),
        }
    first, last = focus.start_line - c.start_line, focus.end_line - c.start_line
    return SearchHit(id=c.id, path=c.path, start_line=c.start_line, end_line=c.end_line,
                     score=score, snippet=make_snippet(c.text, focus=(first, last)),
                     source=c.source, citation=citation(c.path, focus.start_line, focus.end_line),
                     explain=details, namespace=c.namespace, focus_start=focus.start_line,
                     focus_end=focus.end_line, relaxed=relaxed)
