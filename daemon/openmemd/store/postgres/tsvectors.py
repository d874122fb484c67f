"""Chunks' tsvectors assembled by the writer, exactly as the server's `to_tsvector` makes them.

A bulk load is bound by the server (one backend does all of a writer's work), and
`to_tsvector` was the largest single part of that work, ahead of the GIN index
(docs/postgres-scale.md, "Writing"). Nearly all of it is
the parser and the stemmer run word by word over the same few thousand words, again and again.
So the writer keeps, per word it has met, what the server's FTS configuration makes of that
word alone (`Lexicon.learn`: one query per batch for the words it has not met), and assembles
a chunk's tsvector from that: lexeme -> the word numbers it stands at, which is how
`to_tsvector` numbers positions. The stemming stays the server's, so the result is the
server's (equal, and the same text; tests/store/postgres/test_pg_tsvectors.py compares them).

A word that alone does not give exactly one lexeme at position 1 (one the parser would split or
drop, such as a word past 2,047 bytes, which also shifts the positions after it) leaves its
chunk to the server, as do chunks past `to_tsvector`'s limits (positions stop at 16,383, a
lexeme keeps 256): `server_tsvectors` asks for those whole.

Tsvectors travel in PostgreSQL's binary format (`tsvectorsend`/`tsvectorrecv`): an int32
count, then per lexeme (each once; tsvectorrecv sorts them) its UTF-8 bytes, a NUL, a uint16
count of positions and the positions as uint16 (weight D: the top bits 0).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from itertools import chain

import numpy as np
import psycopg
from psycopg.rows import TupleRow

from openmemd.store.postgres.schema import FTS_CONFIG

MAX_POSITION = 16383  # to_tsvector clamps positions here (MAXENTRYPOS - 1)
MAX_POSITIONS = 256  # and keeps this many per lexeme (MAXNUMPOS)
# Words remembered per writer (~130 bytes each); past it the memory starts again.
MAX_WORDS = 100_000

# Per word: its lexeme if the word alone gives exactly one, at position 1; else NULL.
_LEARN = f"""
SELECT w, (SELECT CASE WHEN count(*) = 1 AND bool_and(u.positions = '{{1}}')
                       THEN min(u.lexeme) END
           FROM unnest(to_tsvector('{FTS_CONFIG}', w)) u)
FROM unnest(%s::text[]) w
"""
_WHOLE = (f"SELECT to_tsvector('{FTS_CONFIG}', t) FROM unnest(%s::text[]) WITH ORDINALITY"
          " AS x(t, i) ORDER BY i")


class Lexicon:
    """What the server's FTS configuration makes of each word met so far (one per writer), and
    the tsvectors of a batch assembled from it."""

    def __init__(self, max_words: int = MAX_WORDS) -> None:
        self._max = max_words
        self._clear()

    def _clear(self) -> None:
        # word -> lexeme number, or -1 where the word is not one lexeme alone
        self._ids: dict[str, int] = {}
        self._numbers: dict[bytes, int] = {}  # lexeme (UTF-8 + NUL) -> its number
        self._lexemes: list[bytes] = []
        self._pool = np.zeros(0, dtype=np.uint8)  # the lexemes end to end
        self._start = np.zeros(0, dtype=np.int64)
        self._size = np.zeros(0, dtype=np.int64)

    def learn(self, conn: psycopg.Connection[TupleRow], words: Iterable[str]) -> None:
        """Ask the server about the words not met yet (one statement)."""
        ids = self._ids
        batch = set(words)
        new = list(batch.difference(ids))
        if not new:
            return
        if len(ids) + len(new) > self._max:  # start again, from this batch's words
            self._clear()
            ids, new = self._ids, list(batch)
        numbers, lexemes = self._numbers, self._lexemes
        added: list[bytes] = []
        for word, lexeme in conn.execute(_LEARN, (new,)).fetchall():
            if lexeme is None:
                ids[word] = -1
                continue
            key = lexeme.encode() + b"\0"
            number = numbers.get(key)
            if number is None:
                number = numbers[key] = len(lexemes)
                lexemes.append(key)
                added.append(key)
            ids[word] = number
        if added:  # appended, not rebuilt: a file's flush often brings a new word or two
            size = np.fromiter(map(len, added), dtype=np.int64, count=len(added))
            self._start = np.concatenate([self._start, len(self._pool) + np.cumsum(size) - size])
            self._size = np.concatenate([self._size, size])
            self._pool = np.concatenate(
                [self._pool, np.frombuffer(b"".join(added), dtype=np.uint8)])

    def assemble(self, texts: Sequence[Sequence[str]]) -> tuple[list[bytes | None],
                                                                 dict[str, int]]:
        """Each text's tsvector (binary), or None where only the server can say (a word not
        learned or not one lexeme alone, or past to_tsvector's limits); and how many of the
        assembled ones hold each lexeme. Array work over the whole batch: this runs for every
        chunk written, and word by word in Python it cost more than `to_tsvector` itself."""
        n = len(texts)
        lens = np.fromiter(map(len, texts), dtype=np.int64, count=n)
        ids = self._ids
        total = int(lens.sum())
        try:
            lex = np.fromiter(map(ids.__getitem__, chain.from_iterable(texts)), dtype=np.int64,
                              count=total)
        except KeyError:  # a word not learned (the memory was full): the server's
            lex = np.array([ids.get(w, -1) for words in texts for w in words], dtype=np.int64)
        chunk = np.repeat(np.arange(n), lens)
        pos = _ramp(lens) + 1  # word numbers, as to_tsvector numbers positions
        bad = lens > MAX_POSITION
        bad[chunk[lex < 0]] = True
        while True:
            keep = ~bad[chunk]
            # sorted by chunk, then lexeme, then position, as one number (positions < 2^14,
            # lexeme numbers < 2^26 as MAX_WORDS bounds them)
            key = np.sort((chunk[keep] << 40) | (lex[keep] << 14) | pos[keep])
            c, lx, p = key >> 40, (key >> 14) & (2**26 - 1), key & (2**14 - 1)
            head = np.ones(len(c), dtype=bool)
            head[1:] = (key[1:] >> 14) != (key[:-1] >> 14)
            first = np.flatnonzero(head)  # each (chunk, lexeme) group's first entry
            npos = np.diff(np.append(first, len(c)))
            crowded = c[first[npos >= MAX_POSITIONS]]
            if not len(crowded):
                break
            bad[crowded] = True
        return self._encode(bad, c[first], lx[first], npos, p)

    def _encode(self, bad: np.ndarray, g_chunk: np.ndarray, g_lex: np.ndarray,
                npos: np.ndarray, p: np.ndarray) -> tuple[list[bytes | None], dict[str, int]]:
        """Lays the (chunk, lexeme) groups out in tsvectorrecv's format, the chunks end to end.
        A chunk's lexemes go in lexeme-number order, not byte order: tsvectorrecv sorts them."""
        n = len(bad)
        size = self._size[g_lex]  # the lexeme's bytes with its NUL
        g_size = size + 2 + 2 * npos
        c_size = np.bincount(g_chunk, weights=g_size, minlength=n).astype(np.int64) + 4
        c_size[bad] = 0
        c_start = np.cumsum(c_size) - c_size
        # a group starts after the groups before it and the counts of the chunks up to its own
        g_start = np.cumsum(g_size) - g_size + 4 * np.cumsum(~bad)[g_chunk]
        out = np.zeros(int(c_size.sum()), dtype=np.uint8)
        good = np.flatnonzero(~bad)
        counts = np.bincount(g_chunk, minlength=n)[good]
        for k, shift in enumerate((24, 16, 8, 0)):  # each chunk's lexeme count, int32
            out[c_start[good] + k] = (counts >> shift) & 0xFF
        out[np.repeat(g_start, size) + _ramp(size)] = \
            self._pool[np.repeat(self._start[g_lex], size) + _ramp(size)]
        after = g_start + size  # the count of positions, then the positions: uint16 each
        out[after], out[after + 1] = npos >> 8, npos & 0xFF
        slot = np.repeat(after + 2, npos) + 2 * _ramp(npos)
        out[slot], out[slot + 1] = p >> 8, p & 0xFF
        data = out.tobytes()
        payloads: list[bytes | None] = [None] * n
        for i, start, end in zip(good.tolist(), c_start[good].tolist(),
                                 (c_start[good] + c_size[good]).tolist(), strict=True):
            payloads[i] = data[start:end]
        docs = np.bincount(g_lex, minlength=len(self._lexemes))
        lexemes = self._lexemes
        return payloads, {lexemes[i][:-1].decode(): int(docs[i]) for i in np.flatnonzero(docs)}


def _ramp(sizes: np.ndarray) -> np.ndarray:
    """0..size-1 for each size, end to end."""
    ramp: np.ndarray = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return ramp


def server_tsvectors(conn: psycopg.Connection[TupleRow], texts: Sequence[str]) -> list[bytes]:
    """`to_tsvector` of each text, made by the server, in binary form (one statement)."""
    rows = conn.execute(_WHOLE, (list(texts),), binary=True).fetchall()
    return [bytes(r[0]) for r in rows]


def lexemes_of(payload: bytes) -> list[str]:
    """The lexemes of a tsvector in binary form."""
    (count,) = struct.unpack_from(">i", payload)
    at, out = 4, []
    for _ in range(count):
        end = payload.index(b"\0", at)
        out.append(payload[at:end].decode())
        (npos,) = struct.unpack_from(">H", payload, end + 1)
        at = end + 3 + 2 * npos
    return out
