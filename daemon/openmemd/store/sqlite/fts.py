"""The keyword leg on SQLite: FTS5 BM25 over `chunks_fts`, and the MATCH text it runs.

The MATCH query is an OR of the query's terms (`text.tokens.query_terms`) plus phrases of
adjacent query words: an AND query misses the answer whenever a question uses one word the note
does not; `search/keyword.py` then weighs each chunk by how many of the query's words it holds,
so all-terms matches still rank first. Adjacent-word phrases ("support group") lift chunks
where the words stand together (docs/benchmarks.md, "Figures behind the code's choices").

Every term is built from letters and digits only and wrapped in double quotes (a phrase is two
such words), so no user input (quotes, `*`, `-`, `NEAR`, parentheses, column filters,
`<|endoftext|>`) can make FTS5 raise a syntax error.

Relevance handed to `search/` is −bm25 rank (FTS5's rank is negative, lower is better).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from openmemd.store.base import CandidateFilter, MeasuredChunk
from openmemd.store.derived import is_derived
from openmemd.store.sqlite.db import Connection, OperationalError
from openmemd.store.sqlite.schema import filter_sql
from openmemd.text.tokens import QueryTerms, is_term


def _quote(term: str) -> str:
    # Terms are letters/digits only, so this cannot contain a quote; strip anyway, defensively.
    return '"' + term.replace('"', "") + '"'


def build_match(terms: QueryTerms | Iterable[str], *, op: str = "OR") -> str | None:
    """An FTS5 MATCH expression joining the quoted terms with OR (or AND); None if no terms.

    With OR, the query's adjacent-word phrases are added as extra alternatives (they only
    raise the BM25 of chunks where the words stand together); AND uses the terms alone.
    """
    if op not in ("OR", "AND"):
        raise ValueError(f"op must be OR or AND, not {op!r}")
    if isinstance(terms, QueryTerms):
        items = terms.all + (terms.phrases if op == "OR" else ())
    else:
        items = tuple(terms)
    quoted = [_quote(t) for t in items if t and is_term(t)]
    if not quoted:
        return None
    return f" {op} ".join(quoted)


def _placeholders(n: int) -> str:
    return ", ".join("?" * n)


# The leg's filters (sources, model, derived files) are applied to the best matches as read from
# `chunks`, not inside the MATCH: there they read the keyword row's stored columns for every
# matching row, which cost the leg most of its time (docs/benchmarks.md). The best `limit` × this
# are read first, × 4 more while a filter leaves too few.
FILTER_OVERSAMPLE = 2
FILTER_WIDEN_MAX = 4096  # past this many, the filters run inside the MATCH after all

_RANKED_SQL = (
    "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, f.rank, c.model "
    "FROM (SELECT rowid AS r, id, bm25(chunks_fts) AS rank FROM chunks_fts "
    "WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?) AS f "
    "LEFT JOIN chunks AS c ON c.id = f.id ORDER BY f.rank, f.r"
)


def keyword_candidates(conn: Connection, terms: QueryTerms, *, limit: int,
                       where: CandidateFilter) -> list[MeasuredChunk]:
    """The `limit` chunks with the best BM25 rank, best first (ties by id); measure = −rank.

    Chunk metadata and original text come from `chunks`; an FTS row without its chunk (an
    index caught mid-repair) is skipped. Returns [] if FTS5 is unusable.
    """
    match = build_match(terms, op="OR")
    if match is None or limit <= 0:
        return []
    filtered = where != CandidateFilter()
    take = limit * FILTER_OVERSAMPLE if filtered else limit
    try:
        while take <= FILTER_WIDEN_MAX:
            rows = conn.execute(_RANKED_SQL, (match, take)).fetchall()
            # In the order the MATCH ranks them (ties in its order, as if it had filtered):
            # the first `limit` that pass are the ones a filtered MATCH would have returned.
            kept = [r for r in rows if r[0] is not None and _passes(r, where)][:limit]
            if len(kept) == limit or len(rows) < take:
                return [_candidate(r) for r in sorted(kept, key=lambda r: (r[6], r[0]))]
            take *= 4
        return _filtered_in_match(conn, match, limit=limit, where=where)
    except OperationalError:
        # No FTS5 table (or a corrupt one): the caller degrades to the vector leg.
        return []


def _passes(row: tuple[Any, ...], where: CandidateFilter) -> bool:
    _cid, path, source, _start, _end, _text, _rank, model = row
    return ((not where.sources or source in where.sources)
            and (where.model is None or model == where.model)
            and not (where.skip_derived and is_derived(path)))


def _candidate(row: tuple[Any, ...]) -> MeasuredChunk:
    cid, path, source, start, end, text, rank = row[:7]
    return MeasuredChunk(id=cid, path=path, source=source, start_line=int(start), end_line=int(end),
                         text=text, measure=-float(rank))


def _filtered_in_match(conn: Connection, match: str, *, limit: int,
                       where: CandidateFilter) -> list[MeasuredChunk]:
    """The filters inside the MATCH: when they leave few of the best matches."""
    more, more_params = filter_sql(where)
    clauses = ["chunks_fts MATCH ?", *more]
    params: list[object] = [match, *more_params]
    params.append(limit)
    sql = (
        "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, f.rank "
        "FROM (SELECT id, bm25(chunks_fts) AS rank FROM chunks_fts "
        f"WHERE {' AND '.join(clauses)} ORDER BY rank LIMIT ?) AS f "
        "JOIN chunks AS c ON c.id = f.id ORDER BY f.rank, c.id"
    )
    return [_candidate(r) for r in conn.execute(sql, params).fetchall()]


def keyword_relevance(conn: Connection, terms: QueryTerms, ids: Sequence[str]
                      ) -> dict[str, float]:
    """{id: −bm25 rank} of these chunks under the keyword leg's MATCH; ids without any query
    term are absent. Restricted to the ids (FTS5 ranks each matching row on its own, so the
    rank is the one the leg would have given).

    The rows are picked by rowid (an FTS row shares its chunk's rowid, see
    `queries.insert_chunks`): `id` is an UNINDEXED column, and filtering on it read the stored
    record of every matching row, which cost twice the keyword leg itself. The `+` keeps FTS5
    from taking the rowids as lookup keys, which would run the whole MATCH once per id. A row
    whose id disagrees, matched or not (an index whose keyword rows are not aligned with its
    chunks), sends the lookup back to the slow, exact path.
    """
    match = build_match(terms, op="OR")
    if match is None or not ids:
        return {}
    try:
        rowids = dict(conn.execute(
            f"SELECT rowid, id FROM chunks WHERE id IN ({_placeholders(len(ids))})",
            list(ids)).fetchall())
        rows = conn.execute(
            "SELECT rowid, id, bm25(chunks_fts) FROM chunks_fts "
            f"WHERE chunks_fts MATCH ? AND +rowid IN ({_placeholders(len(rowids))})",
            [match, *rowids]).fetchall() if rowids else []
        matched = {row[0] for row in rows}
        missed = [r for r in rowids if r not in matched]
        aligned = all(rowids.get(rowid) == cid for rowid, cid, _rank in rows) and all(
            rowids[rowid] == cid for rowid, cid in conn.execute(
                f"SELECT rowid, id FROM chunks_fts WHERE rowid IN ({_placeholders(len(missed))})",
                missed))
        if aligned:
            return {cid: -float(rank) for _rowid, cid, rank in rows}
        rows = conn.execute(
            "SELECT rowid, id, bm25(chunks_fts) FROM chunks_fts "
            f"WHERE chunks_fts MATCH ? AND id IN ({_placeholders(len(ids))})",
            [match, *ids]).fetchall()
    except OperationalError:
        return {}
    return {cid: -float(rank) for _rowid, cid, rank in rows}
