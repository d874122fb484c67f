"""The keyword leg's bounded regime (store/postgres/keyword.py), forced on a small index by
lowering EXACT_MATCHES: which chunks it scores, and that their scores are FTS5's BM25 as in the
exact regime (a phrase's weight may only be understated)."""

from __future__ import annotations

import pytest
from pg_rows import fill, row

from openmemd.store.base import CandidateFilter
from openmemd.store.postgres import keyword
from openmemd.text.tokens import query_terms

ANY = CandidateFilter()

DOCS = {
    "a.md": [row("a1", "a.md", "The quasar observation log: quasar spectra look odd."),
             row("a2", "a.md", "Quasar and telescope calibration notes, telescope cooled.")],
    "b.md": [row("b1", "b.md", "The telescope mirror was cleaned on Monday."),
             row("b2", "b.md", "A telescope for the kids; the telescope is blue."),
             row("b3", "b.md", "Telescope budget approved by the committee.")],
    "c.md": [row("c1", "c.md", "Support group met; the support group chose a new room."),
             row("c2", "c.md", "Group support for the support desk and the group leads.")],
}


@pytest.fixture
def filled(pg_store):
    store = pg_store()
    fill(store, DOCS)
    return store.reader()


def _measures(reader, query, limit=20, where=ANY):
    return {c.id: c.measure for c in reader.keyword_candidates(query_terms(query), limit=limit,
                                                               where=where)}


def _bounded(monkeypatch, sample=1):
    monkeypatch.setattr(keyword, "EXACT_MATCHES", 0)
    monkeypatch.setattr(keyword, "SAMPLE_MIN", sample)
    monkeypatch.setattr(keyword, "SAMPLE_FACTOR", 1)


def test_words_score_exactly_as_in_the_exact_regime(filled, monkeypatch):
    exact = _measures(filled, "quasar telescope")
    assert set(exact) == {"a1", "a2", "b1", "b2", "b3"}
    _bounded(monkeypatch, sample=100)
    bounded = _measures(filled, "quasar telescope")
    assert bounded.keys() == exact.keys()  # a sample this large holds every match
    for cid, measure in bounded.items():
        assert measure == pytest.approx(exact[cid], rel=1e-9)


def test_chunks_holding_every_term_are_scored_first(filled, monkeypatch):
    _bounded(monkeypatch)
    # a2 is the one chunk with both words: with a sample of one it is the only one read
    assert list(_measures(filled, "quasar telescope", limit=1)) == ["a2"]
    # asking for more relaxes to chunks holding fewer of the terms
    two = _measures(filled, "quasar telescope", limit=2)
    assert len(two) == 2 and "a2" in two
    assert len(_measures(filled, "quasar telescope", limit=4)) >= 4


def test_coverage_levels():
    assert keyword._levels(["a", "b", "c"]) == ["(a & b & c)", "(a & b) | (a & c) | (b & c)",
                                               "(a) | (b) | (c)"]
    many = [f"t{i}" for i in range(12)]  # a CJK query's n-grams: rarest-first halving
    assert keyword._levels(many) == [" & ".join(many[:j]) for j in (12, 6, 3, 1)]


def test_a_phrase_is_never_weighted_more_than_exactly(filled, monkeypatch):
    terms = query_terms("support group")
    assert terms.phrases  # the pair is matched as a phrase too
    exact = _measures(filled, "support group")
    _bounded(monkeypatch, sample=100)
    bounded = _measures(filled, "support group")
    assert bounded.keys() == exact.keys() == {"c1", "c2"}
    assert all(bounded[c] <= exact[c] + 1e-9 for c in bounded)
    assert bounded["c1"] > bounded["c2"]  # c1 has the words side by side, twice
    # the relevance of given ids agrees with the candidates' (both calls choose alike)
    again = filled.keyword_relevance(terms, list(bounded))
    assert again == pytest.approx(bounded, rel=1e-9)


def test_filters_apply_before_the_sample(pg_store, monkeypatch):
    store = pg_store()
    derived = "memory/dreaming/light/2024-01-01.md"
    # the only chunk holding both words is a derived one
    fill(store, {derived: [row("d1", derived, "Report: spectra cooled overnight.")], **DOCS})
    reader = store.reader()
    _bounded(monkeypatch)
    assert list(_measures(reader, "spectra cooled", limit=1)) == ["d1"]
    # filtered in the query, not after it: the sample of one is a chunk that passes
    kept = _measures(reader, "spectra cooled", limit=1, where=CandidateFilter(skip_derived=True))
    assert set(kept) <= {"a1", "a2"} and len(kept) == 1
    assert _measures(reader, "telescope", limit=1,
                     where=CandidateFilter(sources=("sessions",))) == {}


def test_odd_queries_are_plain_queries_in_the_bounded_regime(filled, monkeypatch):
    _bounded(monkeypatch)
    # quotes, backslashes and tsquery operators are words or separators, never syntax
    for query in ["quasar's \\telescope", "quasar & | ! <-> telescope:*", "'quasar'", "!!!"]:
        found = _measures(filled, query, limit=2)
        assert set(found) <= {"a1", "a2", "b1", "b2", "b3"}
    assert "a2" in _measures(filled, "quasar's \\telescope", limit=2)
