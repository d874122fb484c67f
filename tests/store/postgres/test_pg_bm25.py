"""The keyword leg's relevance equals the SQLite backend's (FTS5's −bm25) for the same chunks
and query, so `search/`'s calibration (RELEVANCE_FLOOR, relative_score, min_score) means the
same on both backends."""

from __future__ import annotations

import pytest
from pg_rows import fill, row

from openmemd.store import open_store
from openmemd.store.base import CandidateFilter
from openmemd.text.tokens import query_terms

DOCS = [
    "Caroline went to the LGBTQ support group yesterday and felt supported.",
    "Melanie paints landscapes; painting relaxes her after work at the hospital.",
    "The support team answered the group ticket about the broken build.",
    "Caroline is researching adoption agencies because she wants to adopt children.",
    "A long note about nothing in particular, with many words that repeat words words.",
    "北京大学 is a university in Beijing; 她在北京大学读书。",
    "Café crème at the café: naïve résumé of the coöperative's menu.",
]
QUERIES = ["support group", "Caroline adoption", "painting", "words", "北京大学", "cafe resume",
           "what did Caroline do at the support group?"]


@pytest.mark.parametrize("query", QUERIES)
def test_relevance_matches_fts5_bm25(pg_store, make_settings, query):
    docs = {f"d{i}.md": [row(f"d{i}", f"d{i}.md", text)] for i, text in enumerate(DOCS)}
    store = pg_store()
    fill(store, docs)
    got = {c.id: c.measure for c in store.reader().keyword_candidates(
        query_terms(query), limit=50, where=CandidateFilter())}
    sqlite = open_store(make_settings(), "main")
    try:
        fill(sqlite, docs)
        want = {c.id: c.measure for c in sqlite.reader().keyword_candidates(
            query_terms(query), limit=50, where=CandidateFilter())}
    finally:
        sqlite.close()
    assert sqlite.backend == "sqlite" and want
    assert set(got) == set(want), query
    for cid, value in want.items():
        assert got[cid] == pytest.approx(value, rel=1e-6, abs=1e-9), (query, cid)
    # and for given ids (the fusion's lookup of chunks outside the candidates)
    rel = store.reader().keyword_relevance(query_terms(query), sorted(want))
    assert rel == pytest.approx(got)
