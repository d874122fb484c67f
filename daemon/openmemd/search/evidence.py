"""Whether the memory holds anything for a query: absolute evidence, comparable across queries.

The ranking scores cannot answer that. The keyword score is relative to the best keyword hit
(`keyword.relative_score`), so the best chunk sharing any one word with the query always looks
strong; and e5's cosine is flat and high for text a query has nothing to do with, so the
calibrated vector score alone passes min_score too.

Evidence of one chunk, 0..1, the larger of two readings:

    words and meaning together: (calibrated vector score + K) / 2, where
        K = the weighted share of the query's terms the chunk contains, or 0 when that is
            one word of several carrying less than half the weight (`coincidental`), or
            when the chunk's meaning is further from the query than the median candidate's
            (its words are there in another sense)
    meaning alone:              calibrated vector score - calibrated score of the query's
                                median other candidate (0, the calibration's "unrelated"
                                level, when there is no other)

A term's weight is its IDF over the chunks the search already holds (both legs' candidates)
times its specificity in general English (commonness.py): over the few candidates of a small
memory IDF alone cannot tell a generic word ("name") from the topic ("dentist"). Any chunk may
hold one ordinary word of a question; two of its words together, or the word carrying most of
it, are evidence. A chunk holding every word of the question keeps them even when its meaning
sits below the median (a quoted "payments queue" among notes about billing).

The head of a noun phrase alone is not the phrase: when the head is a more common word than
the one before it ("blood type", "zodiac sign"), found without its modifier it is not one of
the question's words held together (`lone_generic_heads`); it still ranks its chunk. Words held
in another sense are no exact keyword match either, so the relaxed fallback (pipeline.py,
OpenClaw #29112) does not show them (`in_another_sense`).

The second reading lets a paraphrase with no word in common through, but only when its chunk
stands out from the rest: a query about nothing is about as close to every chunk, so its best
chunk gains nothing over its median one. A search returns results only when its best
candidate's evidence reaches `min_score`; the results themselves are chosen and ordered by the
fused score, in which a `coincidental` chunk ranks by its meaning alone
(pipeline._score_fused). The measurements behind each rule, and the wider rules tried, are in
docs/benchmarks.md ("Search quality": "real-word questions about things never written down",
"questions naming a speaker", "a noun phrase's head alone", "words in another sense").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from openmemd.search.commonness import specificity
from openmemd.text.tokens import light_stem

# The share of a query's information (IDF-weighted terms) a chunk must hold for its words to
# count on their own: one word of several below it is `coincidental`; the relaxed fallback
# (pipeline.py) asks a keyword hit for as much.
MAJORITY = 0.5


def corpus_idf(terms: Sequence[str], found_in: Iterable[AbstractSet[str]]) -> dict[str, float]:
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


def term_weights(idf: Mapping[str, float]) -> dict[str, float]:
    """Each query term's evidence weight: its IDF over the candidates (`corpus_idf`) times its
    specificity in general English (commonness.py)."""
    return {t: w * specificity(t) for t, w in idf.items()}


def coincidental(words_found: int, query_words: int, share: float) -> bool:
    """Whether a chunk's words are a coincidence rather than evidence: it holds one word of a
    question of several and that word carries less than half of the question's information
    (`share`, its keyword evidence). Any chunk of a memory may hold any one ordinary word ("what
    is my library card number": a chat about a trip to the library), two of the question's
    words together or its main part are no longer chance."""
    return query_words >= 2 and words_found < 2 and share < MAJORITY


def lone_generic_heads(phrases: Sequence[str], terms: Sequence[str]) -> dict[str, str]:
    """{head: modifier} for the query's noun phrases whose head says little alone, as query
    terms: the last pair of each run of adjacent content words (`QueryTerms.phrases`, in
    order) whose second word is more common in English than its first ("blood type": type)."""
    by_stem = {light_stem(t): t for t in terms}
    starts = {phrase.split(" ", 1)[0] for phrase in phrases}
    heads: dict[str, str] = {}
    for phrase in phrases:
        first, last = phrase.split(" ", 1)
        if last in starts:  # not the end of its run: "upcoming grand" in "upcoming grand opening"
            continue
        modifier, head = by_stem.get(light_stem(first)), by_stem.get(light_stem(last))
        if modifier and head and specificity(head) < specificity(modifier):
            heads[head] = modifier
    return heads


def without_lone_heads(found: AbstractSet[str], heads: Mapping[str, str]) -> frozenset[str]:
    """The terms `found` less each generic head whose modifier is not among them."""
    return frozenset(t for t in found if heads.get(t, t) in found)


def keyword_evidence(found: Iterable[str], weights: Mapping[str, float]) -> float:
    """The share of the query's term weight held by a text containing the terms `found`."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    return min(1.0, sum(weights.get(t, 0.0) for t in set(found)) / total)


def in_another_sense(vector_score: float | None, keyword: float, baseline: float) -> bool:
    """Whether a chunk holds the question's words in another sense: its meaning is further
    from the question than the query's median candidate's (`baseline`) and it holds only part
    of them ("both blood and the ones we choose" for "what is Caroline's blood type"). A chunk
    holding all of them is no such coincidence: among 200 days of work notes, the one naming
    "payments queue" sat below the median of notes about billing and Kafka by meaning."""
    return vector_score is not None and vector_score < baseline and keyword < 1.0


def evidence(vector_score: float | None, keyword: float, baseline: float) -> float:
    """A chunk's evidence from its calibrated vector score (None: no vector), its keyword
    evidence and `baseline`, the calibrated score of the query's median other candidate."""
    if vector_score is None:  # keyword-only: the one reading there is
        return keyword
    if in_another_sense(vector_score, keyword, baseline):
        keyword = 0.0  # its words show nothing
    return max(0.5 * vector_score + 0.5 * keyword, vector_score - baseline)


def median(values: Sequence[float]) -> float | None:
    """The median of `values`, None for none."""
    ordered = sorted(values)
    if not ordered:
        return None
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])
