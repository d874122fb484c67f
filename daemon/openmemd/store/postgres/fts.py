"""Keyword search text and FTS5's BM25, so scores mean on PostgreSQL what they mean on SQLite.

`search/` turns the keyword leg's relevance into scores calibrated on SQLite FTS5's BM25
(`RELEVANCE_FLOOR`, `relative_score`); `ts_rank` lives on another scale (~0.01-0.1), so with
it `min_score` would mean something else. This backend therefore computes FTS5's BM25 itself:

    score(D) = sum over query phrases q of  idf(q) * f(q,D) * (k1 + 1)
                                            / (f(q,D) + k1 * (1 - b + b * |D| / avgdl))
    idf(q) = ln((N - n(q) + 0.5) / (n(q) + 0.5)), and 1e-6 where that is <= 0 (FTS5's clamp)

with k1 = 1.2, b = 0.75, N and avgdl over the searched namespaces (`ns_stats`), n(q) the
documents containing q, f(q,D) its occurrences (a two-word phrase counts where the words stand
side by side) and |D| the document's token count (`chunks.doclen`).

Tokenisation follows `porter unicode61 remove_diacritics 2` as far as PostgreSQL allows:
`prepare()` does unicode61's part in Python (case folding, diacritics removed, every run of
letters and digits a token, anything else a separator) and hands PostgreSQL only words and
spaces, so its parser cannot split differently (URLs, e-mails, hyphens); stemming is
PostgreSQL's snowball English stemmer without stop words (`schema.FTS_CONFIG`). Snowball
("Porter 2") differs from FTS5's Porter in a few suffixes; both sides of a search use it, so
only a handful of inflections match differently. A Porter stemmer in Python was the
alternative: exact, but it would cost every indexed token a Python call.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence

# Recorded in the index identity: changing prepare() or the text search configuration
# (schema.py) means a full rebuild.
TOKENIZER_ID = "pg-unicode61py-snowball-english+cjk-bi-uni-v1"
K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
_WORD = re.compile(r"[^\W_]+")
# every ASCII character but letters and digits, as a space
_ASCII_SEPARATORS = str.maketrans({chr(i): " " for i in range(128) if not chr(i).isalnum()})
_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")


def prepare(text: str) -> list[str]:
    """unicode61 with remove_diacritics: lowercased letter/digit runs without accents."""
    text = text.lower()
    if text.isascii():  # the same runs, at half the cost of the regular expression
        return text.translate(_ASCII_SEPARATORS).split()
    text = unicodedata.normalize("NFC", _MARKS.sub("", unicodedata.normalize("NFD", text)))
    return _WORD.findall(text)


def tsquery_phrase(lexemes: Sequence[str]) -> str | None:
    """A tsquery matching the lexemes side by side (one lexeme: that lexeme)."""
    quoted = ["'" + lx.replace("\\", "\\\\").replace("'", "''") + "'" for lx in lexemes if lx]
    if not quoted:
        return None
    return quoted[0] if len(quoted) == 1 else "(" + " <-> ".join(quoted) + ")"


def occurrences(lexemes: Sequence[str], positions: Mapping[str, Sequence[int]]) -> int:
    """f(q, D): how often the phrase occurs, from the document's positions of each lexeme."""
    first = positions.get(lexemes[0]) if lexemes else None
    if not first:
        return 0
    if len(lexemes) == 1:
        return len(first)
    rest = [set(positions.get(lx) or ()) for lx in lexemes[1:]]
    if not all(rest):
        return 0
    return sum(1 for p in first if all(p + i + 1 in r for i, r in enumerate(rest)))


_TSV_ENTRY = re.compile(r"'((?:[^']|'')*)':([0-9A-D,]+)")


def frequencies(phrases: Sequence[Sequence[str]], tsvector_text: str) -> list[int]:
    """f(q, D) of each phrase, from the text form of a tsvector holding (at least) their
    lexemes (`'dog':1A,4A 'trip':2A`). A single lexeme's count is its number of positions, read
    without parsing them: this runs once per matching chunk."""
    entries: dict[str, str] = {}
    for m in _TSV_ENTRY.finditer(tsvector_text):
        lexeme = m[1]
        entries[lexeme.replace("''", "'") if "''" in lexeme else lexeme] = m[2]
    out = []
    for phrase in phrases:
        if len(phrase) == 1:
            raw = entries.get(phrase[0])
            out.append(raw.count(",") + 1 if raw else 0)
        else:
            out.append(occurrences(phrase, {lx: [int(p.rstrip("ABCD")) for p in raw.split(",")]
                                            for lx in phrase if (raw := entries.get(lx))}))
    return out


def idf(n_docs: int, containing: int) -> float:
    value = math.log((n_docs - containing + 0.5) / (containing + 0.5))
    return value if value > 0 else IDF_FLOOR


def bm25(freqs: Sequence[int], idfs: Sequence[float], doclen: int, avgdl: float) -> float:
    """FTS5's BM25 (as a relevance: higher is better, i.e. -bm25())."""
    norm = K1 * (1 - B + B * doclen / avgdl) if avgdl > 0 else K1
    return sum(w * f * (K1 + 1) / (f + norm) for f, w in zip(freqs, idfs, strict=True) if f)
