"""Maximal marginal relevance: re-rank so near-duplicate chunks do not fill the top K.

Greedy: next = argmax λ·rel_norm − (1−λ)·max Jaccard(similarity to the already selected),
with relevance min-max normalised over the candidates (all equal → 1) and ties broken by the
raw score (then by input order, so the result is deterministic). Similarity is the Jaccard
index of token sets: lowercased ASCII word runs plus CJK unigrams and bigrams, so it works
for Chinese and Japanese too. λ = 1 keeps plain relevance order; λ = 0 maximises diversity.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from openmemd.text.tokens import CJK_RUN, cjk_ngrams

_ASCII_WORD = re.compile(r"[a-z0-9_]+")


def mmr_tokens(text: str) -> frozenset[str]:
    lowered = text.lower()
    tokens = set(_ASCII_WORD.findall(lowered))
    for run in CJK_RUN.findall(lowered):
        tokens.update(cjk_ngrams(run))
    return frozenset(tokens)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def iter_mmr(scores: Sequence[float], texts: Sequence[str], lambda_: float) -> Iterator[int]:
    """Yield candidate indices in MMR order, lazily (a caller needing K items pays ~K·n)."""
    n = len(scores)
    if len(texts) != n:
        raise ValueError("scores and texts differ in length")
    lam = min(1.0, max(0.0, lambda_))
    by_score = sorted(range(n), key=lambda i: (-scores[i], i))
    if lam >= 1.0 or n <= 1:
        yield from by_score
        return
    lo, hi = min(scores), max(scores)
    rel = [1.0 if hi == lo else (s - lo) / (hi - lo) for s in scores]
    tokens = [mmr_tokens(t) for t in texts]
    max_sim = [0.0] * n  # max similarity of each candidate to anything selected so far
    remaining = list(by_score)  # kept in score order so ties resolve by raw score
    while remaining:
        best_pos, best_value = 0, -float("inf")
        for pos, i in enumerate(remaining):
            value = lam * rel[i] - (1 - lam) * max_sim[i]
            if value > best_value + 1e-12:
                best_pos, best_value = pos, value
        chosen = remaining.pop(best_pos)
        yield chosen
        for i in remaining:
            sim = jaccard(tokens[i], tokens[chosen])
            if sim > max_sim[i]:
                max_sim[i] = sim
