"""Pure score arithmetic: per-model cosine calibration, lexical boosts, fusion of the legs.

`min_score` must mean the same thing whatever the leg and the model. Keyword scores are
`r/(1+r_top)` of the BM25 relevance (search/keyword.py). Raw cosine similarity is not comparable
across models: multilingual-e5 scores even *unrelated* text far above 0.35, so a raw threshold
passes everything, while OpenAI's text-embedding-3 scores related text near 0.5. Each model's cosine
is therefore mapped linearly from its "unrelated" level (→ 0) to its "clearly related" level (→ 1),
clamped to 0..1 (the levels measured: docs/benchmarks.md, "Figures behind the code's choices").
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

DEFAULT_VECTOR_WEIGHT = 0.7
DEFAULT_TEXT_WEIGHT = 0.3
DEFAULT_RRF_K = 60


@dataclass(frozen=True)
class Calibration:
    """Linear map of a model's cosine similarity onto 0..1 (clamped)."""

    unrelated: float  # typical cosine between unrelated query and passage
    related: float  # typical cosine between a question and the passage answering it

    def __call__(self, cosine: float) -> float:
        if not math.isfinite(cosine):
            return 0.0
        span = self.related - self.unrelated
        if span <= 0:
            return min(1.0, max(0.0, cosine))
        return min(1.0, max(0.0, (cosine - self.unrelated) / span))


# Unknown models: raw cosine (OpenClaw's behaviour, sane for OpenAI-like embedding spaces).
IDENTITY = Calibration(0.0, 1.0)

# "unrelated" → 0 and "related" → 1, keyed by a pattern on the lowercased model name (first
# match wins). For e5 and MiniLM the levels are measured, set so min_score 0.35 sits at the top
# of "same topic, not the answer"; OpenAI text-embedding-3's are from its published ranges.
MODEL_CALIBRATIONS: tuple[tuple[re.Pattern[str], Calibration], ...] = (
    (re.compile(r"(^|[/_\-.])(nano)?e5([/_\-.]|$)|multilingual-e5|e5-(small|base|large)"),
     Calibration(0.75, 0.90)),
    (re.compile(r"minilm"), Calibration(0.10, 0.60)),
    (re.compile(r"text-embedding-3"), Calibration(0.10, 0.55)),
)


def calibration_for(model: str) -> Calibration:
    name = model.lower()
    for pattern, calibration in MODEL_CALIBRATIONS:
        if pattern.search(name):
            return calibration
    return IDENTITY


def normalise_weights(vector_weight: float, text_weight: float) -> tuple[float, float]:
    """Clamp each weight to 0..1 and scale them to sum 1; both 0 → the defaults."""
    vw = min(1.0, max(0.0, vector_weight)) if math.isfinite(vector_weight) else 0.0
    tw = min(1.0, max(0.0, text_weight)) if math.isfinite(text_weight) else 0.0
    total = vw + tw
    if total <= 0:
        return DEFAULT_VECTOR_WEIGHT, DEFAULT_TEXT_WEIGHT
    return vw / total, tw / total


def weighted_fusion(vector_scores: Mapping[str, float], text_scores: Mapping[str, float],
                    vector_weight: float, text_weight: float, *,
                    vectorless: AbstractSet[str] = frozenset()) -> dict[str, float]:
    """score = vw·vector + tw·text over the union of ids (a missing leg scores 0).

    `vectorless`: ids with no vector at all yet (pending: a first index, a rebuild cut short);
    an unknown meaning is not a meaning of 0, so they are fused on the leg they have, the
    weights renormalised over it: their text score stands alone."""
    vw, tw = normalise_weights(vector_weight, text_weight)
    ids = dict.fromkeys([*vector_scores, *text_scores])
    return {i: text_scores.get(i, 0.0) if i in vectorless
            else vw * vector_scores.get(i, 0.0) + tw * text_scores.get(i, 0.0) for i in ids}


def rrf_fusion(vector_ranking: Sequence[str], text_ranking: Sequence[str],
               vector_weight: float, text_weight: float, *,
               k: int = DEFAULT_RRF_K,
               vectorless: AbstractSet[str] = frozenset()) -> dict[str, float]:
    """Weighted reciprocal-rank fusion, scaled so first in both legs scores 1.0.

    raw = Σ w_leg / (k + rank_leg) (rank 1-based); dividing by Σ w_leg / (k + 1) keeps the
    result in 0..1, which the rest of the pipeline (decay, MMR, reporting) expects.
    `vectorless` ids (no vector yet, as in `weighted_fusion`) are scaled by their keyword leg's
    best alone: first by keyword scores 1.0.
    """
    vw, tw = normalise_weights(vector_weight, text_weight)
    k = max(1, k)
    best = (vw + tw) / (k + 1)
    scores: dict[str, float] = {}
    for weight, ranking in ((vw, vector_ranking), (tw, text_ranking)):
        for rank, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    text_best = tw / (k + 1)
    return {i: (s / text_best if text_best > 0 else 0.0) if i in vectorless else s / best
            for i, s in scores.items()}


def lexical_boost_score(text_score: float, *, coverage: float, overlap: float,
                        path_hits: int, text_length: int) -> float:
    """OpenClaw's keyword-only ("fallback lexical boost") score, capped at 1.

    coverage = distinct query terms found / distinct query terms; overlap = the same count over
    the chunk's distinct tokens; path_hits = query terms inside the lowercased path.
    """
    score = (text_score + 0.45 * coverage + 0.2 * overlap + 0.18 * path_hits
             + min(text_length / 160, 0.18))
    return min(1.0, score)
