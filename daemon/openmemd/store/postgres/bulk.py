"""The writer's buffer: chunk and file rows written set-based, a batch at a time.

Written one file at a time, a load is bound by round trips (a DELETE, an INSERT per chunk, a
stats upsert and a file upsert per file), not by work. So `PgWriter` collects what
`replace_chunks` and `upsert_file` are given inside a transaction here, and `flush` writes it
with a handful of statements whatever its size: one DELETE of the replaced paths' old chunks,
one binary COPY of the new rows straight into `chunks`, one upsert of the lexeme counts, one of
the namespace's totals, one of the file rows. The tsvectors come assembled by the writer from
what the server's FTS configuration said of each word (tsvectors.py: the server's result at a
fraction of its cost), and the counters that must match the chunks (`ns_stats`: BM25's N and
total length; `ns_lexemes`: n(q) per lexeme) change in the same transaction as the chunks they
count, aggregated over the batch by the writer: done by the server's one backend instead, they
bound the load (docs/postgres-scale.md, "Writing").

A batch's statements run under the bulk timeout (schema.BULK_TIMEOUT), not the query timeout:
once the database has an HNSW index (any namespace past schema.HNSW_MIN_VECTORS), every row
with a vector is added to its graph, so one `store copy` batch can run past the 15 s default,
and every re-run would fail alike (docs/postgres-scale.md, "Once the HNSW index exists").
A flush is a write of known size, not a query that can run away; the writer's other
statements keep the query timeout.

Deleted chunks' lexemes are counted from `tsvector_to_array` (no positions: half the cost of
unnesting the tsvector itself). A `ns_lexemes` row that falls to 0 is left in place (readers
treat 0 as absent): a replaced file mostly brings its words back, and a rebuild or heal starts
the namespace's rows afresh.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import TupleRow

from openmemd.store.postgres.schema import BULK_TIMEOUT, SCHEMA
from openmemd.store.postgres.tsvectors import Lexicon, lexemes_of, server_tsvectors

# Buffered chunk rows that trigger a flush before the transaction ends (bounds memory).
FLUSH_ROWS = 5000
# A buffered chunk row: the `chunks` columns after `ns`, with the words of its keyword text
# (fts.prepare) where `fts` and `doclen` go.
WORDS = 8
_COLUMNS = ("ns", "id", "path", "source", "start_line", "end_line", "hash", "model", "text",
            "fts", "doclen", "embedding", "dims", "updated_at")
# COPY's binary format carries no types: the server reads each field with its column's own
# receive function. So `fts` and `embedding` go as bytes already in that function's format
# (tsvectors.py; `_vector_fields`), made for the whole batch at once instead of by an adapter
# row by row.
_TYPES = ("text", "text", "text", "text", "int4", "int4", "text", "text", "text", "bytea",
          "int4", "bytea", "int4", "int8")
_COPY = f"COPY {SCHEMA}.chunks ({', '.join(_COLUMNS)}) FROM STDIN (FORMAT BINARY)"

_STATS_UPSERT = (f"INSERT INTO {SCHEMA}.ns_stats(ns, docs, tokens) {{rows}}"
                 " ON CONFLICT (ns) DO UPDATE SET docs = ns_stats.docs + excluded.docs,"
                 " tokens = ns_stats.tokens + excluded.tokens")

# Old chunks of the given paths out; their lexeme and token counts with them.
DELETE_PATHS = f"""
WITH gone AS (
  DELETE FROM {SCHEMA}.chunks WHERE ns = %(ns)s AND path = ANY(%(paths)s) RETURNING fts, doclen),
lx AS (
  UPDATE {SCHEMA}.ns_lexemes l SET docs = l.docs - g.n
  FROM (SELECT u.lexeme, count(*)::integer AS n
        FROM gone, unnest(tsvector_to_array(gone.fts)) u(lexeme) GROUP BY u.lexeme) g
  WHERE l.ns = %(ns)s AND l.lexeme = g.lexeme)
{_STATS_UPSERT.format(rows="SELECT %(ns)s, -count(*), -coalesce(sum(doclen), 0) FROM gone"
                           " HAVING count(*) > 0")}
"""
_LEXEMES_ADD = (f"INSERT INTO {SCHEMA}.ns_lexemes(ns, lexeme, docs)"
                " SELECT %s, * FROM unnest(%s::text[], %s::int4[])"
                " ON CONFLICT (ns, lexeme) DO UPDATE SET docs = ns_lexemes.docs + excluded.docs")
_STATS_ADD = _STATS_UPSERT.format(rows="VALUES (%s, %s, %s)")

_FILES_UPSERT = (
    f"INSERT INTO {SCHEMA}.files(ns, path, source, hash, mtime, size, ctime_ns, ino)"
    " SELECT %s, * FROM unnest(%s::text[], %s::text[], %s::text[], %s::bigint[], %s::bigint[],"
    " %s::bigint[], %s::bigint[]) ON CONFLICT (ns, path) DO UPDATE SET"
    " source = excluded.source, hash = excluded.hash, mtime = excluded.mtime,"
    " size = excluded.size, ctime_ns = excluded.ctime_ns, ino = excluded.ino")


@dataclass
class Batch:
    """What waits for the next flush: each replaced path's new rows (the last call wins, as it
    would row by row) and each upserted file's row (likewise)."""

    chunks: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    files: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    rows: int = 0

    def __bool__(self) -> bool:
        return bool(self.chunks or self.files)

    def replace(self, path: str, rows: list[tuple[Any, ...]]) -> None:
        self.rows += len(rows) - len(self.chunks.get(path, ()))
        self.chunks[path] = rows

    def clear(self) -> None:
        self.chunks.clear()
        self.files.clear()
        self.rows = 0


def flush(conn: psycopg.Connection[TupleRow], ns: str, batch: Batch, lexicon: Lexicon) -> None:
    """Write `batch` (then empty it). Call inside a transaction: a failure leaves nothing (and
    the rollback undoes the timeout set here too)."""
    previous = conn.execute("SELECT current_setting('statement_timeout'), set_config("
                            "'statement_timeout', %s, true)", (BULK_TIMEOUT,)).fetchone()
    _write(conn, ns, batch, lexicon)
    if previous is not None:
        conn.execute("SELECT set_config('statement_timeout', %s, true)", (previous[0],))


def _write(conn: psycopg.Connection[TupleRow], ns: str, batch: Batch, lexicon: Lexicon) -> None:
    if batch.chunks:
        conn.execute(DELETE_PATHS, {"ns": ns, "paths": list(batch.chunks)})
    if batch.rows:
        rows = [r for rows in batch.chunks.values() for r in rows]
        fts, docs = _tsvectors(conn, lexicon, [r[WORDS] for r in rows])
        vectors = _vector_fields([r[WORDS + 1] for r in rows])
        with conn.cursor().copy(_COPY) as copy:
            copy.set_types(_TYPES)
            for r, tsv, vec in zip(rows, fts, vectors, strict=True):
                copy.write_row((ns, *r[:WORDS], tsv, len(r[WORDS]), vec, *r[WORDS + 2:]))
        conn.execute(_LEXEMES_ADD, (ns, list(docs), list(docs.values())))
        conn.execute(_STATS_ADD, (ns, len(rows), sum(len(r[WORDS]) for r in rows)))
    if batch.files:
        cols = list(zip(*batch.files.values(), strict=True))
        conn.execute(_FILES_UPSERT, (ns, list(batch.files), *map(list, cols)))
    batch.clear()


def _tsvectors(conn: psycopg.Connection[TupleRow], lexicon: Lexicon,
               texts: list[list[str]]) -> tuple[list[bytes], Counter[str]]:
    """Each text's tsvector (assembled from the words the lexicon knows, else the server's)
    and how many of them hold each lexeme."""
    lexicon.learn(conn, chain.from_iterable(texts))
    made, counts = lexicon.assemble(texts)
    docs = Counter(counts)
    left = [i for i, t in enumerate(made) if t is None]
    if left:
        for i, tsv in zip(left, server_tsvectors(conn, [" ".join(texts[i]) for i in left]),
                          strict=True):
            made[i] = tsv
            docs.update(set(lexemes_of(tsv)))
    return [t for t in made if t is not None], docs


def _vector_fields(vectors: list[np.ndarray | None]) -> list[bytes | None]:
    """Each vector in pgvector's binary format (`vector_recv`: uint16 dimensions, uint16 0,
    big-endian float32s), converted a batch of one size at a time."""
    out: list[bytes | None] = [None] * len(vectors)
    by_size: dict[int, list[tuple[int, np.ndarray]]] = {}
    for i, v in enumerate(vectors):
        if v is not None:
            by_size.setdefault(int(v.shape[0]), []).append((i, v))
    for dims, rows in by_size.items():
        data = np.stack([v for _, v in rows]).astype(">f4").tobytes()
        head, step = struct.pack(">HH", dims, 0), 4 * dims
        for k, (i, _) in enumerate(rows):
            out[i] = head + data[k * step:(k + 1) * step]
    return out
