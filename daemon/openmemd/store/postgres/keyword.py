"""The keyword leg on PostgreSQL: candidates by a GIN `@@` OR-query, ranked by FTS5's BM25.

Three round trips: the query's terms and phrases become lexemes with the same text search
configuration the index uses; one scan of the GIN index returns every chunk of the searched
namespaces holding any of them (id, |D|, filter columns, the positions of the query's lexemes,
never the text), from which Python counts n(q) and f(q,D) and computes BM25 (fts.py); the text
of the best `limit` is fetched last. n(q) is counted over all chunks of the searched
namespaces, before source/model/derived filters, as FTS5 counts over its whole table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from openmemd.store.base import CandidateFilter
from openmemd.store.derived import DERIVED_PREFIX
from openmemd.store.postgres import fts
from openmemd.store.postgres.schema import FTS_CONFIG, SCHEMA
from openmemd.text.tokens import QueryTerms


@dataclass(frozen=True)
class Scored:
    ns: str
    id: str
    relevance: float


def _phrases(conn: psycopg.Connection[Any], terms: QueryTerms) -> list[tuple[str, ...]]:
    """Each query term and phrase as the lexemes the index holds (in order, deduplicated)."""
    texts = [" ".join(fts.prepare(t)) for t in (*terms.all, *terms.phrases)]
    texts = [t for t in dict.fromkeys(texts) if t]
    if not texts:
        return []
    rows = conn.execute(
        "SELECT x.i, ARRAY(SELECT u.lexeme FROM unnest(to_tsvector(%s::regconfig, x.t)) u,"
        " unnest(u.positions) p ORDER BY p) FROM unnest(%s::text[]) WITH ORDINALITY x(t, i)"
        " ORDER BY x.i", (FTS_CONFIG, texts)).fetchall()
    return list(dict.fromkeys(tuple(r[1]) for r in rows if r[1]))


def score(conn: psycopg.Connection[Any], terms: QueryTerms, namespaces: Sequence[str],
          where: CandidateFilter | None, ids: Sequence[tuple[str, str]] | None = None
          ) -> list[Scored]:
    """BM25 relevance of the matching chunks (all of them, or only `ids` = (ns, id) pairs)."""
    phrases = _phrases(conn, terms)
    queries = [q for q in (fts.tsquery_phrase(p) for p in phrases) if q]
    if not queries:
        return []
    lexemes = sorted({lx for p in phrases for lx in p})
    stats = conn.execute(f"SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM "
                         f"{SCHEMA}.ns_stats WHERE ns = ANY(%s)", (list(namespaces),)).fetchone()
    n_docs, tokens = (int(stats[0]), int(stats[1])) if stats else (0, 0)
    rows = conn.execute(
        f"SELECT c.ns, c.id, c.doclen, c.source, c.model, starts_with(c.path, %s),"
        f" (SELECT jsonb_object_agg(u.lexeme, u.positions) FROM unnest(c.fts) u"
        f"  WHERE u.lexeme = ANY(%s)) FROM {SCHEMA}.chunks c"
        f" WHERE c.ns = ANY(%s) AND c.fts @@ %s::tsquery",
        (DERIVED_PREFIX, lexemes, list(namespaces), " | ".join(queries))).fetchall()
    n_docs = max(n_docs, len(rows))
    avgdl = tokens / n_docs if n_docs else 0.0
    freqs = [[fts.occurrences(p, row[6] or {}) for p in phrases] for row in rows]
    idfs = [fts.idf(n_docs, sum(1 for f in freqs if f[i])) for i in range(len(phrases))]
    wanted = set(ids) if ids is not None else None
    out = []
    for row, f in zip(rows, freqs, strict=True):
        ns, cid, doclen, source, model, derived = row[:6]
        if wanted is not None and (ns, cid) not in wanted:
            continue
        if where is not None and not _passes(where, source, model, derived):
            continue
        if any(f):
            out.append(Scored(ns, cid, fts.bm25(f, idfs, int(doclen), avgdl)))
    out.sort(key=lambda s: (-s.relevance, s.id, s.ns))
    return out


def _passes(where: CandidateFilter, source: str, model: str, derived: bool) -> bool:
    if where.sources is not None and source not in where.sources:
        return False
    if where.model is not None and model != where.model:
        return False
    return not (where.skip_derived and derived)


def candidates(conn: psycopg.Connection[Any], terms: QueryTerms, namespaces: Sequence[str],
               *, limit: int, where: CandidateFilter) -> list[tuple[Scored, tuple[Any, ...]]]:
    """The best `limit` (Scored, (path, source, start_line, end_line, text)) pairs."""
    if limit <= 0 or not terms:
        return []
    best = score(conn, terms, namespaces, where)[:limit]
    if not best:
        return []
    rows = conn.execute(
        f"SELECT ns, id, path, source, start_line, end_line, text FROM {SCHEMA}.chunks"
        " WHERE (ns, id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
        ([s.ns for s in best], [s.id for s in best])).fetchall()
    by_key = {(r[0], r[1]): r[2:] for r in rows}
    return [(s, by_key[(s.ns, s.id)]) for s in best if (s.ns, s.id) in by_key]
