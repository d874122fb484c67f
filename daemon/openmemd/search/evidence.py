"""Whether the memory holds anything for a query: absolute evidence, comparable across queries.

The ranking scores cannot answer that. The keyword score is relative to the best keyword hit
(`keyword.relative_score`), so the best chunk sharing any one word with the query always looks
strong; and e5's cosine gives text a query has nothing to do with ~0.78-0.84 (a pseudo-word
or a short question about something never written down scores as high as the note answering
a real question in a chat log), so the calibrated vector score alone passes min_score too.
On LoCoMo-dev, 76 % of queries about nothing returned something at the defaults.

Evidence of one chunk, 0..1, the larger of two readings:

    words and meaning together: (calibrated vector score + K) / 2, where
        K = the IDF-weighted share of the query's terms the chunk contains
    meaning alone:              calibrated vector score - calibrated score of the query's
                                median other candidate (0, the calibration's "unrelated"
                                level, when there is no other)

IDF is taken over the chunks the search already holds (both legs' candidates): a term found
in none of them (a pseudo-word, "kubernetes" in notes that never mention it) weighs most, a
term in every candidate (a name in a chat log) almost nothing. So a chunk sharing only "decide"
with "what did we decide about the kubernetes migration" has K ~0.2, not the keyword leg's
~0.65. The second reading lets a paraphrase with no word in common through ("how did we ship
the payments system to prod" for "Deployed the billing service to production"), but only when
its chunk stands out from the rest: a query about nothing is about as close to every chunk
(its cosines are flat), so its best chunk gains nothing over its median one. With min_score
0.35, a chunk sharing no word must stand ~0.05 of e5 cosine above the median candidate.
A search returns results only when its best candidate's evidence reaches `min_score`; the
results themselves are still chosen and ordered by the fused score.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet


def term_weights(terms: Sequence[str], found_in: Iterable[AbstractSet[str]]) -> dict[str, float]:
    """IDF of each query term over a set of texts, given which terms each text contains:
    ln(1 + n / (df + 1)), so a term in no text weighs ln(1 + n), one in every text ~ln 2."""
    counts = dict.fromkeys(terms, 0)
    n = 0
    for found in found_in:
        n += 1
        for t in found:
            if t in counts:
                counts[t] += 1
    return {t: math.log(1.0 + n / (df + 1)) for t, df in counts.items()}


def keyword_evidence(found: Iterable[str], weights: Mapping[str, float]) -> float:
    """The share of the query's term weight held by a text containing the terms `found`."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    return min(1.0, sum(weights.get(t, 0.0) for t in set(found)) / total)


def evidence(vector_score: float | None, keyword: float, baseline: float) -> float:
    """A chunk's evidence from its calibrated vector score (None: no vector), its keyword
    evidence and `baseline`, the calibrated score of the query's median other candidate."""
    if vector_score is None:  # keyword-only: the one reading there is
        return keyword
    return max(0.5 * vector_score + 0.5 * keyword, vector_score - baseline)


def median(values: Sequence[float]) -> float | None:
    """The median of `values`, None for none."""
    ordered = sorted(values)
    if not ordered:
        return None
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])
