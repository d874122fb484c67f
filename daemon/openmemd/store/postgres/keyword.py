"""The keyword leg on PostgreSQL: candidates from the GIN index, ranked by FTS5's BM25 (fts.py).

Two regimes, chosen per query from the document frequencies `ns_lexemes` keeps exactly (one
index lookup, whose plan the scores of the vector leg's hits reuse: see PlanMemo):

* **Exact** -- at most EXACT_MATCHES chunks can hold a query term (the sum of the terms'
  document frequencies, or the chunk count if smaller). One GIN scan returns every matching
  chunk (id, |D|, filter columns, the positions of the query's lexemes, never the text);
  Python counts f(q,D) and n(q) and ranks them all: the top-k FTS5's `ORDER BY rank` gives.
  A memory written by hand is here (a year of daily notes is a few thousand chunks).
* **Bounded** -- past that, scoring every match costs O(matches) (a common word is in 15% of a
  million chunks: 150k rows, seconds), so the leg scores a sample chosen the way `search/`
  ranks anyway (`search/keyword.py` weights relevance by word coverage): chunks holding *all*
  the query's terms first, then those holding all but one of them, and so on, until enough are
  found, a few times the candidates asked for from each such query; then chunks holding any
  term. What bounds the cost is the GIN index's work: a coverage level costs about the postings
  of the rarest term of each of its conjunctions (GIN skips through the others' lists), and a
  query for "any term" builds a bitmap of every match before its LIMIT applies (a word in 6% of
  a million chunks: ~25 ms). So a level is read from the whole index while the levels' postings
  fit POSTINGS_BUDGET, and past that from `chunks_fts_sample`, a GIN index over a fixed
  sixteenth of the chunks (`schema.SAMPLE_PREDICATE`) whose posting lists and bitmaps are
  sixteen times smaller; "any term" comes from there too once it has enough matches. Each sampled
  chunk gets its exact BM25 score (a word's n(q) from `ns_lexemes`); a multi-word phrase's
  n(q) is taken as its rarest word's (an upper bound: the phrase's weight can be understated,
  never overstated), because counting a phrase means reading every chunk holding its words.
  What is approximate is only which chunks get scored when many hold the same terms: among
  equally covered chunks the one with the most occurrences may be missed, and past the budget a
  level's chunks come from a sixteenth of the index.

n(q) counts all chunks of the searched namespaces, before source/model/derived filters, as
FTS5 counts over its whole table.
"""

from __future__ import annotations

import itertools
import math
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import TupleRow

from openmemd.store.base import CandidateFilter
from openmemd.store.derived import DERIVED_PREFIX
from openmemd.store.postgres import fts
from openmemd.store.postgres.schema import FTS_CONFIG, SAMPLE_PREDICATE, SAMPLE_SHARDS, SCHEMA
from openmemd.text.tokens import QueryTerms

# Past this many possible matches (and chunks), the bounded regime. A match costs ~22 us to
# score (heap read, positions, Python), so this is ~45 ms at worst; a search that must answer
# in tens of milliseconds cannot afford more.
EXACT_MATCHES = 2_000
# Chunks read per query in the bounded regime: a few times the candidates asked for (so the
# best of them by BM25 are chosen, not just the first found), at least SAMPLE_MIN. Each costs
# a heap read (~30 us from the OS cache at 1M chunks).
SAMPLE_FACTOR = 4
SAMPLE_MIN = 100
# At most this many term combinations in one coverage level's query (5 words: C(5, 2) = 10).
MAX_COMBINATIONS = 10
# GIN work a query's coverage levels may spend on the whole index, in postings of the rarest
# term of each of their conjunctions (the postings GIN walks; it skips through the other terms'
# lists); a level past it is read from the sample index, a sixteenth of the work. ~0.2 us a
# posting at 1M chunks (measured), so ~10 ms: the vector leg's time, beside which this leg runs.
POSTINGS_BUDGET = 50_000


@dataclass(frozen=True)
class Scored:
    ns: str
    id: str
    relevance: float


@dataclass(frozen=True)
class _Plan:
    """One query against the searched namespaces: its phrases, BM25's corpus statistics and
    the document frequencies known before reading any chunk."""

    phrases: list[tuple[str, ...]]  # each query term and phrase as lexemes, deduplicated
    units: list[tuple[str, int]]  # each query term as (tsquery, n(q) bound), rarest first
    n_docs: int
    avgdl: float
    # per phrase: n(q) from ns_lexemes -- exact for one lexeme, the rarest word's for more
    bound: list[int]

    @property
    def bounded(self) -> bool:
        return min(sum(self.bound), self.n_docs) > EXACT_MATCHES


def _plan(conn: psycopg.Connection[TupleRow], terms: QueryTerms,
          namespaces: Sequence[str]) -> _Plan | None:
    words = [" ".join(fts.prepare(t)) for t in terms.all]
    extra = [" ".join(fts.prepare(t)) for t in terms.phrases]
    texts = [t for t in dict.fromkeys(words + extra) if t]
    if not texts:
        return None
    # One round trip: each text as the lexemes the index holds (in order), N and the token
    # total, and n(q) of every lexeme met.
    row = conn.execute(
        "WITH t AS (SELECT x.i, ARRAY(SELECT u.lexeme FROM unnest(to_tsvector("
        "%(cfg)s::regconfig, x.t)) u, unnest(u.positions) p ORDER BY p) AS lx"
        " FROM unnest(%(texts)s::text[]) WITH ORDINALITY x(t, i))"
        " SELECT (SELECT json_agg(lx ORDER BY i) FROM t),"
        f" (SELECT coalesce(sum(docs), 0) FROM {SCHEMA}.ns_stats WHERE ns = ANY(%(ns)s)),"
        f" (SELECT coalesce(sum(tokens), 0) FROM {SCHEMA}.ns_stats WHERE ns = ANY(%(ns)s)),"
        " (SELECT json_object_agg(lexeme, d) FROM (SELECT lexeme, sum(docs) AS d FROM"
        f" {SCHEMA}.ns_lexemes WHERE ns = ANY(%(ns)s) AND lexeme = ANY(ARRAY(SELECT unnest(lx)"
        " FROM t)) GROUP BY lexeme) z)",
        {"cfg": FTS_CONFIG, "texts": texts, "ns": list(namespaces)}).fetchone()
    if row is None:
        return None
    as_lexemes = {t: tuple(lx or ()) for t, lx in zip(texts, row[0] or (), strict=True)}
    phrases = list(dict.fromkeys(lx for t in texts if (lx := as_lexemes[t])))
    if not phrases:
        return None
    n_docs, tokens = int(row[1]), int(row[2])
    known = {k: int(v) for k, v in (row[3] or {}).items()}
    bound = [min(known.get(lx, 0) for lx in p) for p in phrases]
    by_phrase = dict(zip(phrases, bound, strict=True))
    term_lexemes = [as_lexemes[t] for t in dict.fromkeys(words) if as_lexemes.get(t)]
    units = sorted({(q, by_phrase[lx]) for lx in term_lexemes
                    if (q := fts.tsquery_phrase(lx))}, key=lambda u: (u[1], u[0]))
    return _Plan(phrases, units, n_docs, tokens / n_docs if n_docs else 0.0, bound)


def _select(plan: _Plan) -> tuple[str, list[Any]]:
    """Each chunk's id, |D|, filter columns and the positions of the query's lexemes only:
    setweight marks them, ts_filter keeps them (in C; far cheaper than unnesting every chunk's
    tsvector)."""
    lexemes = sorted({lx for p in plan.phrases for lx in p})
    return (f"SELECT c.ns, c.id, c.doclen, c.source, c.model, starts_with(c.path, %s),"
            f" ts_filter(setweight(c.fts, 'A', %s), '{{a}}')::text FROM {SCHEMA}.chunks c"
            " WHERE c.ns = ANY(%s)", [DERIVED_PREFIX, lexemes])


def _any_query(plan: _Plan) -> str:
    return " | ".join(q for q in (fts.tsquery_phrase(p) for p in plan.phrases) if q)


class PlanMemo:
    """The plan of a search's keyword leg, kept for the scores of its vector leg's hits.

    `search/` normalises those scores by the leg's best, so both must come from one reading of
    the corpus statistics (N, average |D|, n(q)): read again, a write in between would score
    them against two different collections. Reusing it also saves a round trip and the
    query's to_tsvector. A plan is taken once, and is held only while the search's QueryTerms
    object lives (weakly keyed): nothing outlives the search that made it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # the legs run on different threads
        self._plans: weakref.WeakKeyDictionary[QueryTerms, tuple[tuple[str, ...], _Plan]] = (
            weakref.WeakKeyDictionary())

    def keep(self, terms: QueryTerms, namespaces: Sequence[str], plan: _Plan) -> None:
        with self._lock:
            self._plans[terms] = (tuple(namespaces), plan)

    def take(self, terms: QueryTerms, namespaces: Sequence[str]) -> _Plan | None:
        with self._lock:
            kept = self._plans.pop(terms, None)
        return kept[1] if kept is not None and kept[0] == tuple(namespaces) else None


def score(conn: psycopg.Connection[TupleRow], terms: QueryTerms, namespaces: Sequence[str],
          where: CandidateFilter | None, ids: Sequence[tuple[str, str]] | None = None, *,
          limit: int = 0, plans: PlanMemo | None = None) -> list[Scored]:
    """BM25 relevance of the matching chunks -- all of them in the exact regime, a sample in
    the bounded one (see the module docstring) -- or only of `ids` = (ns, id) pairs. With
    `plans`, the leg keeps its plan there and the scores of `ids` take it."""
    plan = plans.take(terms, namespaces) if plans is not None and ids is not None else None
    if plan is None:
        plan = _plan(conn, terms, namespaces)
    if plan is None:
        return []
    if plans is not None and ids is None:
        plans.keep(terms, namespaces, plan)
    select, params = _select(plan)
    params.append(list(namespaces))
    if ids is not None:
        rows = conn.execute(select + " AND (c.ns, c.id) IN (SELECT * FROM unnest(%s::text[],"
                            " %s::text[]))", [*params, [k[0] for k in ids],
                                              [k[1] for k in ids]]).fetchall()
        return _ranked(plan, rows, _known_containing(conn, plan, namespaces), None)
    if plan.bounded:
        rows = _sample(conn, plan, select, params, where, limit=limit)
        return _ranked(plan, rows, plan.bound, None)
    rows = conn.execute(select + " AND c.fts @@ %s::tsquery",
                        [*params, _any_query(plan)]).fetchall()
    freqs = [fts.frequencies(plan.phrases, r[6]) for r in rows]
    containing = [sum(1 for f in freqs if f[i]) for i in range(len(plan.phrases))]
    return _ranked(plan, rows, containing, where, freqs=freqs)


def _known_containing(conn: psycopg.Connection[TupleRow], plan: _Plan,
                      namespaces: Sequence[str]) -> list[int]:
    """n(q) of every phrase without reading the chunks asked about: words from ns_lexemes;
    multi-word phrases counted through the GIN index in the exact regime (few rows by
    definition), their bound in the bounded one, as `score` does."""
    todo = [i for i, p in enumerate(plan.phrases) if len(p) > 1]
    if plan.bounded or not todo:
        return plan.bound
    counts = ", ".join("count(*) FILTER (WHERE c.fts @@ %s::tsquery)" for _ in todo)
    queries = [fts.tsquery_phrase(plan.phrases[i]) for i in todo]
    row = conn.execute(f"SELECT {counts} FROM {SCHEMA}.chunks c WHERE c.ns = ANY(%s)"
                       " AND c.fts @@ %s::tsquery",
                       [*queries, list(namespaces), " | ".join(q for q in queries if q)]
                       ).fetchone()
    out = list(plan.bound)
    for i, n in zip(todo, row or (), strict=True):
        out[i] = int(n)
    return out


def _sample(conn: psycopg.Connection[TupleRow], plan: _Plan, select: str, params: list[Any],
            where: CandidateFilter | None, *, limit: int = 0) -> list[tuple[Any, ...]]:
    """Chunks passing `where` holding all the terms, then all but one, ..., then any term (the
    module docstring says why): each level from the whole GIN index while POSTINGS_BUDGET
    allows, then from the sample index, up to `want` of each, until `limit` are found (more
    levels would only add chunks `search/` ranks below these)."""
    if not plan.units:
        return []
    want = max(SAMPLE_MIN, SAMPLE_FACTOR * limit)
    cond, extra = _filter_sql(where)
    sampled = f" AND {SAMPLE_PREDICATE.format(c='c.')}"
    levels: list[tuple[str, str]] = []
    spent = 0
    for query, cost in _levels(plan.units):
        if spent + cost <= POSTINGS_BUDGET:
            levels.append((query, ""))
            spent += cost
        elif spent + cost // SAMPLE_SHARDS <= POSTINGS_BUDGET:
            levels.append((query, sampled))
            spent += cost // SAMPLE_SHARDS
        else:
            break
    # Any term, from the sample index when a sixteenth of the matches is still `want` (the sum
    # of the terms' postings counts a chunk once per term it holds, so this is optimistic).
    postings = sum(n for _, n in plan.units)
    levels.append((" | ".join(q for q, _ in plan.units),
                   sampled if postings >= SAMPLE_SHARDS * want else ""))
    found: dict[tuple[str, str], tuple[Any, ...]] = {}
    with conn.transaction():
        # The GIN index, always: with a LIMIT the planner bets a common word is met early in a
        # sequential scan, but another namespace's rows may come first (seconds at 1M rows).
        conn.execute("SET LOCAL enable_seqscan = off")
        for query, shard in dict.fromkeys(levels):
            rows = conn.execute(f"{select}{cond}{shard} AND c.fts @@ %s::tsquery LIMIT %s",
                                [*params, *extra, query, want]).fetchall()
            for r in rows:
                found.setdefault((r[0], r[1]), r)
            if len(found) >= max(limit, 1):
                break
    return list(found.values())


def _levels(units: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """The coverage levels of a query's terms ((tsquery, n(q)), rarest first) that need two or
    more of them, each with its GIN cost (the postings of each conjunction's rarest term):
    chunks holding all n, then at least n-1 of them, ... -- written out as an OR of ANDs, which
    one GIN scan answers. A query of many terms (a CJK query has a dozen n-grams) would need
    too many combinations (past MAX_COMBINATIONS in a level): its levels require the rarest n
    terms, then the rarest half of them, and so on."""
    n = len(units)
    out: list[tuple[str, int]] = []
    if math.comb(n, n // 2) <= MAX_COMBINATIONS:
        for j in range(n, 1, -1):
            combos = list(itertools.combinations(units, j))
            out.append((" | ".join(f"({' & '.join(q for q, _ in c)})" for c in combos),
                        sum(min(df for _, df in c) for c in combos)))
        return out
    j = n
    while j >= 2:
        out.append((" & ".join(q for q, _ in units[:j]), min(df for _, df in units[:j])))
        j //= 2
    return out


def _filter_sql(where: CandidateFilter | None) -> tuple[str, list[Any]]:
    if where is None:
        return "", []
    cond, params = "", list[Any]()
    if where.sources is not None:
        cond += " AND c.source = ANY(%s)"
        params.append(list(where.sources))
    if where.model is not None:
        cond += " AND c.model = %s"
        params.append(where.model)
    if where.skip_derived:
        cond += " AND NOT starts_with(c.path, %s)"
        params.append(DERIVED_PREFIX)
    return cond, params


def _ranked(plan: _Plan, rows: Sequence[tuple[Any, ...]], containing: Sequence[int],
            where: CandidateFilter | None, *, freqs: Sequence[list[int]] | None = None
            ) -> list[Scored]:
    idfs = [fts.idf(max(plan.n_docs, len(rows)), c) for c in containing]
    if freqs is None:
        freqs = [fts.frequencies(plan.phrases, r[6]) for r in rows]
    out = []
    for row, f in zip(rows, freqs, strict=True):
        ns, cid, doclen, source, model, derived = row[:6]
        if where is not None and not _passes(where, source, model, derived):
            continue
        if any(f):
            out.append(Scored(ns, cid, fts.bm25(f, idfs, int(doclen), plan.avgdl)))
    out.sort(key=lambda s: (-s.relevance, s.id, s.ns))
    return out


def _passes(where: CandidateFilter, source: str, model: str, derived: bool) -> bool:
    if where.sources is not None and source not in where.sources:
        return False
    if where.model is not None and model != where.model:
        return False
    return not (where.skip_derived and derived)


def candidates(conn: psycopg.Connection[TupleRow], terms: QueryTerms, namespaces: Sequence[str],
               *, limit: int, where: CandidateFilter, plans: PlanMemo | None = None
               ) -> list[tuple[Scored, tuple[Any, ...]]]:
    """The best `limit` (Scored, (path, source, start_line, end_line, text)) pairs."""
    if limit <= 0 or not terms:
        return []
    best = score(conn, terms, namespaces, where, limit=limit, plans=plans)[:limit]
    if not best:
        return []
    rows = conn.execute(
        f"SELECT ns, id, path, source, start_line, end_line, text FROM {SCHEMA}.chunks"
        " WHERE (ns, id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
        ([s.ns for s in best], [s.id for s in best])).fetchall()
    by_key = {(r[0], r[1]): r[2:] for r in rows}
    return [(s, by_key[(s.ns, s.id)]) for s in best if (s.ns, s.id) in by_key]
