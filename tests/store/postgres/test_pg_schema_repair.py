"""Parts of the schema dropped from under the store (by hand, by a partial restore): the store
says the index is damaged, creates what is missing, and what is left agrees with it again."""

from __future__ import annotations

import psycopg
import pytest
from pg_rows import fill, row, unit

from openmemd.store.base import CandidateFilter, IndexDamagedError
from openmemd.store.postgres.schema import SCHEMA, missing_parts
from openmemd.text.tokens import query_terms

TERMS = query_terms("kafka")


def _admin(url: str, sql: str) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql)
        return cur.fetchall() if cur.description else []


def _counts(url: str) -> dict[str, list[tuple]]:
    return {t: _admin(url, f"SELECT * FROM {SCHEMA}.{t} ORDER BY 1, 2")
            for t in ("ns_stats", "ns_lexemes")}


def test_dropped_counters_are_counted_again_from_the_chunks(pg_store, pg_url):
    store = pg_store()
    fill(store, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1)),
                          row("b", "a.md", "kafka broker restarts", unit(2))]})
    before = _counts(pg_url)
    _admin(pg_url, f"DROP TABLE {SCHEMA}.ns_stats; DROP TABLE {SCHEMA}.ns_lexemes")
    with pytest.raises(IndexDamagedError, match=r"openmemd schema .* is damaged"):
        store.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter())
    hits = store.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter())
    assert {h.id for h in hits} == {"a", "b"}
    assert _counts(pg_url) == before  # BM25's N, avgdl and n(q) as they were
    with psycopg.connect(pg_url) as conn:
        assert missing_parts(conn) == []


def test_dropped_chunks_empty_every_namespace_for_a_refill(pg_store, pg_url):
    # Without its chunks a namespace's file rows would say "indexed, unchanged" for ever: in
    # every namespace (other daemons share the database) the content goes, so each daemon's
    # next sync indexes its Markdown again; the embedding cache and identities stay.
    # Its `meta` table goes too: without a version row, parts of a schema are still damage.
    mine, theirs = pg_store(), pg_store(agent="other")
    fill(mine, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1))]})
    fill(theirs, {"t.md": [row("t", "t.md", "kafka topic", unit(3))]})
    meta_before = _admin(pg_url, f"SELECT count(*) FROM {SCHEMA}.ns_meta")
    _admin(pg_url, f"DROP TABLE {SCHEMA}.chunks; DROP TABLE {SCHEMA}.meta")
    w = mine.writer()
    assert w.load_signatures()  # files is still there: a file row says "a.md, unchanged"
    with pytest.raises(IndexDamagedError, match="chunks"):
        w.count_pending_vectors("m")
    assert w.load_signatures() == {}  # repaired before the next statement: nothing indexed
    assert theirs.writer().load_signatures() == {}
    assert _admin(pg_url, f"SELECT count(*) FROM {SCHEMA}.ns_meta") == meta_before
    mine.heal("chunks dropped")  # what the daemon does with damage its writer met
    fill(mine, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1))]})
    hits = mine.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter())
    assert [h.id for h in hits] == ["a"]
    with psycopg.connect(pg_url) as conn:
        assert missing_parts(conn) == []


def test_a_restart_repairs_what_was_dropped_while_no_daemon_ran(pg_store, pg_url):
    store = pg_store()
    fill(store, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1))]})
    store.close()
    _admin(pg_url, f"DROP INDEX {SCHEMA}.chunks_fts; DROP TABLE {SCHEMA}.skipped;"
                   f" DROP TEXT SEARCH CONFIGURATION {SCHEMA}.fts")
    again = pg_store()  # a new process: its first use ensures the schema
    hits = again.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter())
    assert [h.id for h in hits] == ["a"]  # nothing emptied: the chunks were all there
    with psycopg.connect(pg_url) as conn:
        assert missing_parts(conn) == []


def test_pgvector_dropped_and_created_again_leaves_the_vectors_to_embed_again(pg_store, pg_url):
    store = pg_store()
    fill(store, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1))]})
    assert store.writer().count_pending_vectors("m") == 0
    _admin(pg_url, "DROP EXTENSION vector CASCADE")  # takes the vector columns with it
    with pytest.raises(IndexDamagedError):
        store.reader().vector_candidates(unit(1), limit=3, where=CandidateFilter())
    hits = store.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter())
    assert [h.id for h in hits] == ["a"]
    w = store.writer()
    assert w.count_pending_vectors("m") == 1  # its vector went with the column
    w.set_vectors([("a", unit(1))])
    assert [h.id for h in store.reader().vector_candidates(unit(1), limit=3,
                                                           where=CandidateFilter())] == ["a"]


def test_two_daemons_repairing_at_once_take_turns(pg_store, pg_url):
    # Both meet the damage and both repair before their next statement: the schema's advisory
    # lock makes them take turns, the second finds nothing missing, and the counters are
    # counted once (not twice), for both namespaces.
    import threading

    mine, theirs = pg_store(), pg_store(agent="other")
    fill(mine, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1))]})
    fill(theirs, {"t.md": [row("t", "t.md", "kafka topic", unit(3)),
                           row("u", "t.md", "kafka broker", unit(4))]})
    before = _counts(pg_url)
    _admin(pg_url, f"DROP TABLE {SCHEMA}.ns_stats; DROP TABLE {SCHEMA}.ns_lexemes;"
                   f" DROP INDEX {SCHEMA}.chunks_fts")
    for store in (mine, theirs):
        with pytest.raises(IndexDamagedError):
            store.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter())
    found: dict[str, set[str]] = {}
    failures: list[BaseException] = []
    start = threading.Barrier(2)

    def search(name: str, store) -> None:
        try:
            start.wait()
            hits = store.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter())
            found[name] = {h.id for h in hits}
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=search, args=(n, s))
               for n, s in (("mine", mine), ("theirs", theirs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert failures == [] and found == {"mine": {"a"}, "theirs": {"t", "u"}}
    assert _counts(pg_url) == before
    with psycopg.connect(pg_url) as conn:
        assert missing_parts(conn) == []


def test_the_others_hear_that_a_repair_emptied_their_namespace(pg_store, pg_url, monkeypatch):
    # The daemon that repairs knows; another sharing the database met no error. Its reader
    # hears it once, as damage (so its daemon re-indexes), then reads on.
    from openmemd.store.postgres import generation

    monkeypatch.setattr(generation, "CHECK_EVERY_S", 0.0)
    mine, theirs = pg_store(), pg_store(agent="other")
    fill(mine, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1))]})
    fill(theirs, {"t.md": [row("t", "t.md", "kafka topic", unit(3))]})
    assert [h.id for h in theirs.reader().keyword_candidates(
        TERMS, limit=3, where=CandidateFilter())] == ["t"]
    _admin(pg_url, f"DROP TABLE {SCHEMA}.chunks")
    with pytest.raises(IndexDamagedError, match="chunks"):
        mine.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter())
    assert mine.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter()) == []
    assert theirs.status()["reachable"]  # not a search: does not take the news
    assert theirs.reader().stats(None).chunks == 0
    with pytest.raises(IndexDamagedError, match="emptied by a repair"):
        theirs.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter())
    assert theirs.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter()) == []
    fill(theirs, {"t.md": [row("t", "t.md", "kafka topic", unit(3))]})  # its re-index
    assert [h.id for h in theirs.reader().keyword_candidates(
        TERMS, limit=3, where=CandidateFilter())] == ["t"]


def test_a_store_whose_own_write_met_the_damage_still_hears_the_repair(pg_store, pg_url):
    # The race CI met: the other daemon's upkeep ran into the dropped table (its healing failed
    # as well, the table still gone), so it ensured the schema again at its next statement and
    # took the new generation in silence -- status, not a search -- and its namespace stayed
    # empty. Adopting a changed generation is news too, whatever CHECK_EVERY_S says.
    mine, theirs = pg_store(), pg_store(agent="other")
    fill(mine, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1))]})
    fill(theirs, {"t.md": [row("t", "t.md", "kafka topic", unit(3))]})
    _admin(pg_url, f"DROP TABLE {SCHEMA}.chunks")
    with pytest.raises(IndexDamagedError, match="chunks"):
        theirs.writer().count_pending_vectors("m")
    with pytest.raises(IndexDamagedError, match="chunks"):
        mine.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter())
    assert mine.status()["reachable"]  # mine repairs: the content of both is emptied
    assert theirs.status()["reachable"]  # theirs ensures the schema again: nothing to repair
    with pytest.raises(IndexDamagedError, match="emptied by a repair"):
        theirs.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter())
    assert theirs.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter()) == []
    # mine's search met the damage and asked for its re-index: told once, not twice
    assert mine.reader().keyword_candidates(TERMS, limit=3, where=CandidateFilter()) == []


def test_a_heal_covers_the_emptying_its_own_write_met(pg_store, pg_url):
    mine = pg_store()
    fill(mine, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1))]})
    _admin(pg_url, f"DROP TABLE {SCHEMA}.chunks")
    with pytest.raises(IndexDamagedError, match="chunks"):
        mine.writer().count_pending_vectors("m")
    mine.heal("chunks dropped")  # repairs at its first statement, then refills: no news after
    fill(mine, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1))]})
    assert [h.id for h in mine.reader().keyword_candidates(
        TERMS, limit=3, where=CandidateFilter())] == ["a"]


def test_upkeep_that_meets_a_dropped_table_has_the_heal_after_it_repair_first(pg_store, pg_url):
    # The daemon heals what its upkeep met (Maintainer._guarded): the heal's first statement
    # must repair the schema, not run into the same missing table and fail too.
    mine = pg_store()
    fill(mine, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1))]})
    _admin(pg_url, f"DROP TABLE {SCHEMA}.chunks")
    with pytest.raises(IndexDamagedError, match="chunks"):
        mine.maintain()  # ANALYZE of the chunks, the first upkeep after a sync
    mine.heal("chunks dropped")
    with psycopg.connect(pg_url) as conn:
        assert missing_parts(conn) == []
