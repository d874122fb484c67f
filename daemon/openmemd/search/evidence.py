"""Whether the memory holds anything for a query: absolute evidence, comparable across queries.

The ranking scores cannot answer that. The keyword score is relative to the best keyword hit
(`keyword.relative_score`), so the best chunk sharing any one word with the query always looks
strong; and e5's cosine gives text a query has nothing to do with ~0.78-0.84 (a pseudo-word
or a short question about something never written down scores as high as the note answering
a real question in a chat log), so the calibrated vector score alone passes min_score too.
On LoCoMo-dev, 76 % of queries about nothing returned something at the defaults.

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
times its specificity in general English (commonness.py). A term found in none of them (a
pseudo-word, "kubernetes" in notes that never mention it) weighs most, a term in every
candidate (a name in a chat log) almost nothing. So a chunk sharing only "decide" with "what
did we decide about the kubernetes migration" has K ~0.2, not the keyword leg's ~0.65. The IDF
alone cannot tell a generic word from the topic, though: over the ~25 candidates of a small
memory a word found in one of them weighs almost as much as one found in none, so "what is my
dentist's name" in a chat that never mentions a dentist, whose one chunk naming something holds
"name", had K ~0.4 and, with e5's flat ~0.4 for any chunk of the same memory, passed 0.35. On
real-word questions about things never written down, 22-24 % returned something at the
defaults. English specificity weighs "name" below "dentist", and a chunk sharing a single
ordinary word with a question of several is a coincidence (any chunk may hold one ordinary
word; two of the question's words together, or the word carrying most of it, are not): its
words add nothing, and only its meaning can show it answers. The same questions now return
something 4-5 % of the time, with 2 of 997 answerable LoCoMo-dev questions lost (both had
passed on a speaker's name and at most one ordinary word, "car", not on the question's topic).

A chunk whose calibrated vector score is below the query's median candidate's holds the
question's words in another sense, and they show nothing: "what is Caroline's blood type"
found "both blood and the ones we choose" (Caroline's name is in every chunk of her chat), and
its (0.28 + 0.70) / 2 passed. A chunk holding all of the question's words is exempt: among 200
days of work notes, the one naming the "payments queue" sat below the median of the notes about
billing and Kafka by meaning, and a quoted "payments queue" found nothing (LoCoMo-dev figures
unchanged by the exemption). Of 100 questions naming a speaker about things never discussed
(bench/locomo-offtopic-names.jsonl) 48 returned something, 42 now; no answerable LoCoMo-dev
question lost its evidence. Most of the 42 share the speaker's name and one of the question's
words in the same sense ("Tim's shoes" for "Tim's shoe size"): words cannot tell those from a
partial answer, and e5's meaning does not either.

The head of a noun phrase alone is not the phrase. "What is Caroline's blood type" found
"Melanie: What type of music do you play?", "what is Caroline's zodiac sign" a line about a sign
at the park: an English noun phrase ends on its head, and when the head is a more common word
than the word before it ("blood type", "phone number", "zodiac sign", "mortgage rate"), the
phrase's topic is that word and the head alone names something else ("what type of music",
"my number one goal"). For whether the memory holds an answer, such a head found without its
modifier is not one of the question's words held together (`lone_generic_heads`); it still
ranks its chunk. A head more specific than its modifier keeps counting alone ("Tomorrow's
opening will be so much fun" answers "the upcoming grand opening"), and only the last pair of a
run of words is a head with its modifier ("upcoming grand opening": "grand opening"). Of 100
questions naming a speaker about things never discussed, 42 returned something, 37 now
(off-topic 3.5 % -> 3 %) and no answerable LoCoMo-dev question lost its evidence. The modifier
alone still counts ("new shoes" for "Caroline's shoe size"), and so does a verb ("paid off" for
"how much rent does she pay"). Wider rules (either word of any adjacent pair, or not counted
for ranking either) cost one answerable point for every five to ten of these
(docs/benchmarks.md).

Words held in another sense are no exact keyword match either: when nothing passes, the
relaxed fallback (pipeline.py, OpenClaw #29112) shows a keyword hit holding half the question's
information, and "both blood and the ones we choose" came back that way for "Caroline's blood
type". Such a chunk is now no keyword match (`in_another_sense`); of the names kind 36 returned
something, 31 now, and one of 997 answerable LoCoMo-dev questions lost its evidence (an
inference, "would Caroline move back to her home country soon", holding none of its words).
Most of the 31 are answered in the other speaker's words ("Jon: I had to shut down my bank
account" for "which bank does Gina use"), the shape of LoCoMo's adversarial questions (237 of
the 997, evidence by construction in the other speaker's line), which must keep their answers.

The second reading lets a paraphrase with no word in common through ("how did we ship
the payments system to prod" for "Deployed the billing service to production"), but only when
its chunk stands out from the rest: a query about nothing is about as close to every chunk
(its cosines are flat), so its best chunk gains nothing over its median one. With min_score
0.35, a chunk sharing no word must stand ~0.05 of e5 cosine above the median candidate.
A search returns results only when its best candidate's evidence reaches `min_score`; the
results themselves are chosen and ordered by the fused score, in which a chunk whose words are
`coincidental` ranks by its meaning alone (pipeline._score_fused).
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
