"""The keyword leg's bounded regime (store/postgres/keyword.py), forced on a small index by
lowering EXACT_MATCHES: which chunks it scores, and that their scores are FTS5's BM25 as in the
exact regime (a phrase's weight may only be understated)."""

from __future__ import annotations

import pytest
from pg_rows import fill, row

from openmemd.store.base import CandidateFilter
from openmemd.store.postgres import keyword
from openmemd.store.postgres.schema import SAMPLE_INDEX, SAMPLE_PREDICATE
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


def test_coverage_levels_and_their_gin_cost():
    units = [("a", 2), ("b", 5), ("c", 9)]  # (tsquery, postings), rarest first
    # each conjunction costs its rarest term's postings: GIN skips through the others' lists
    assert keyword._levels(units) == [("(a & b & c)", 2),
                                      ("(a & b) | (a & c) | (b & c)", 2 + 2 + 5)]
    assert keyword._levels([("a", 2)]) == []  # one term: only the "any term" query
    many = [(f"t{i}", 10 + i) for i in range(12)]  # a CJK query's n-grams: rarest-first halving
    assert keyword._levels(many) == [(" & ".join(f"t{i}" for i in range(j)), 10)
                                     for j in (12, 6, 3)]


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


SAMPLED = {f"s{i}.md": [row(f"s{i}", f"s{i}.md", f"Telescope note number {i}.")]
           for i in range(64)}


def _in_sample(store):
    with store._pool.connection() as conn:
        return {r[0] for r in conn.execute(
            "SELECT id FROM openmemd.chunks WHERE " + SAMPLE_PREDICATE.format(c=""))}


def test_levels_past_the_postings_budget_read_the_sample_index(pg_store, monkeypatch):
    store = pg_store()
    fill(store, SAMPLED)
    bucket = _in_sample(store)
    assert 0 < len(bucket) < 64  # a sixteenth of the ids, give or take
    reader = store.reader()
    _bounded(monkeypatch)
    # within the budget: the whole index, whose first match (by position) is outside the bucket
    whole = _measures(reader, "telescope note", limit=1)
    assert len(whole) == 1 and not set(whole) <= bucket
    # past it: the level is read from the sample index, so what it finds is in the bucket
    monkeypatch.setattr(keyword, "POSTINGS_BUDGET", 10)  # the level costs 64 (64 // 16 fits)
    sampled = _measures(reader, "telescope note", limit=1)
    assert len(sampled) == 1 and set(sampled) <= bucket
    # and the scores are the same as the exact regime's
    monkeypatch.setattr(keyword, "EXACT_MATCHES", 10**9)
    exact = _measures(reader, "telescope note", limit=64)
    for cid, measure in sampled.items():
        assert measure == pytest.approx(exact[cid], rel=1e-9)
    with store._pool.connection() as conn:
        conn.execute("SET enable_seqscan = off")  # the table is tiny: make the plan honest
        # (the namespace's B-tree left out: on 64 rows it would win, on a million it does not)
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT c.id FROM openmemd.chunks c WHERE "
            + SAMPLE_PREDICATE.format(c="c.") + " AND c.fts @@ 'telescop'::tsquery LIMIT 5"))
    assert SAMPLE_INDEX in plan  # the predicate is the index's: the planner can use it


def _sample_index_validity(store):
    with store._pool.connection() as conn:
        return [r[0] for r in conn.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE c.relname = %s", (SAMPLE_INDEX,))]


def test_maintain_builds_the_sample_index_a_database_lacks(pg_store):
    store = pg_store()
    fill(store, SAMPLED)
    with store._pool.connection() as conn:  # a database from before the sample index
        conn.execute(f"DROP INDEX openmemd.{SAMPLE_INDEX}")
    store.maintain()
    assert store.wait_for_builds(60)
    assert _sample_index_validity(store) == [True]


def test_maintain_redoes_a_sample_index_a_killed_build_left_invalid(pg_store):
    store = pg_store()
    fill(store, SAMPLED)
    with store._pool.connection() as conn:
        # what a CREATE INDEX CONCURRENTLY killed half-way leaves: the index, marked invalid
        conn.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass",
                     (f"openmemd.{SAMPLE_INDEX}",))
    store.maintain()
    assert store.wait_for_builds(60)
    assert _sample_index_validity(store) == [True]
    reader = store.reader()
    assert _measures(reader, "telescope")  # and searches keep working
