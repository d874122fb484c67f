"""The PostgreSQL store against the interface: writes, both search legs, namespaces, lock,
rebuild, schema versions. (The shared contract suite runs it too, see tests/store/.)"""

from __future__ import annotations

import os
import re
import socket
import threading

import psycopg
import pytest
from pg_rows import fill, row, unit

from openmemd.errors import IndexLockedError
from openmemd.store.base import CacheKey, CandidateFilter
from openmemd.text.tokens import query_terms


def test_keyword_and_vector_legs(pg_store):
    store = pg_store()
    fill(store, {"MEMORY.md": [row("a", "MEMORY.md", "Alice adopted a puppy named Rex", unit(1)),
                               row("b", "MEMORY.md", "Bob likes hiking in the Alps", unit(2))],
                 "memory/dreaming/light/2024-01-01.md": [
                     row("c", "memory/dreaming/light/2024-01-01.md", "puppy report", unit(3))]})
    r = store.reader()
    hits = r.keyword_candidates(query_terms("puppies adopted"), limit=5, where=CandidateFilter())
    assert hits[0].id == "a"
    assert {h.id for h in hits} == {"a", "c"}
    assert all(h.measure > 0 and h.namespace == "host/main" for h in hits)
    skip = r.keyword_candidates(query_terms("puppy"), limit=5,
                                where=CandidateFilter(skip_derived=True))
    assert [h.id for h in skip] == ["a"]
    vec = r.vector_candidates(unit(2), limit=2, where=CandidateFilter(model="m"))
    assert vec[0].id == "b" and vec[0].measure == pytest.approx(1.0, abs=1e-5)
    assert r.cosines(unit(2), ["a", "b", "zz"], model="m").keys() == {"a", "b"}
    rel = r.keyword_relevance(query_terms("puppy"), ["a", "b"])
    assert set(rel) == {"a"}


def test_second_writer_is_locked_and_lock_is_freed(pg_store):
    first = pg_store()
    first.writer()
    second = pg_store()
    with pytest.raises(IndexLockedError, match="host/main") as locked:
        second.writer()
    # it names the holder: host and pid (application_name), address, since when
    holder = f"openmemd writer {socket.gethostname()}:{os.getpid()}, from 127.0.0.1"
    assert holder in str(locked.value)
    assert re.search(r"connected since \d{4}-\d\d-\d\d \d\d:\d\d UTC", str(locked.value))
    first.close()
    second.writer()  # free once the first writer is gone


def test_namespaces_share_the_cache_and_search_each_other(pg_store):
    a = pg_store(agent="a")
    b = pg_store('search_namespaces = ["host/a", "host/b"]', agent="b")
    key = CacheKey("local", "m", "k")
    wa = fill(a, {"n.md": [row("x", "n.md", "shared team note about kafka", unit(1))]})
    with wa.transaction():
        wa.cache_store(key, [("h1", unit(1))], 5)
    fill(b, {"n.md": [row("x", "n.md", "own note about kafka", unit(1))]})
    assert set(b.writer().cache_lookup(key, ["h1", "h2"])) == {"h1"}
    hits = b.reader().keyword_candidates(query_terms("kafka"), limit=5, where=CandidateFilter())
    assert {(h.id, h.namespace) for h in hits} == {("x", "host/b"), ("x@host/a", "host/a")}
    assert set(b.reader().cosines(unit(1), ["x", "x@host/a"], model="m")) == {"x", "x@host/a"}
    # a searches only its own namespace by default
    assert [h.namespace for h in a.reader().keyword_candidates(
        query_terms("kafka"), limit=5, where=CandidateFilter())] == ["host/a"]


def test_rebuild_keeps_old_rows_until_done(pg_store):
    store = pg_store()
    fill(store, {"a.md": [row("a", "a.md", "old text here", unit(1))]})

    def build(w):
        with w.transaction():
            w.upsert_file("b.md", "memory", "fh", 1, 1, 1, 1)
            w.replace_chunks("b.md", [row("b", "b.md", "new text here", unit(2))])
        # readers still see the old index while the build runs
        assert set(store.reader().stored_files()) == {"a.md"}
        return 42

    assert store.rebuild(build) == 42
    assert set(store.reader().stored_files()) == {"b.md"}
    with pytest.raises(RuntimeError):
        store.rebuild(lambda w: (_ for _ in ()).throw(RuntimeError("boom")))
    assert set(store.reader().stored_files()) == {"b.md"}


def test_maintain_builds_the_hnsw_index_and_search_uses_it(pg_store, monkeypatch):
    from openmemd.store.postgres import schema

    monkeypatch.setattr(schema, "HNSW_MIN_VECTORS", 30)
    store = pg_store()
    fill(store, {f"f{i}.md": [row(f"c{i}", f"f{i}.md", f"note {i}", unit(i))] for i in range(40)})
    with store._pool.connection() as conn:  # what earlier openmemd versions built
        conn.execute("CREATE INDEX chunks_hnsw_8 ON openmemd.chunks USING hnsw"
                     " ((embedding::vector(8)) vector_cosine_ops) WHERE dims = 8")
        conn.execute("CREATE INDEX chunks_hnsw_half_8 ON openmemd.chunks USING hnsw"
                     " ((embedding::halfvec(8)) halfvec_cosine_ops) WHERE dims = 8")
    store.maintain()
    assert store.wait_for_builds(60)
    with store._pool.connection() as conn:
        defs = {r[0]: r[1] for r in conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE 'chunks_hnsw%'")}
    assert list(defs) == ["chunks_hnsw_m16_efc128_8"]
    assert "ef_construction='128'" in defs["chunks_hnsw_m16_efc128_8"]
    with store._pool.connection() as conn:
        conn.execute("SET enable_seqscan = off")  # the table is tiny: make the plan honest
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT id FROM openmemd.chunks WHERE dims = 8 AND ns = ANY(%s) ORDER BY"
            " embedding::halfvec(8) <=> %s::halfvec(8) LIMIT 5", (["host/main"], unit(3))))
    assert "chunks_hnsw_m16_efc128_8" in plan
    hits = store.reader().vector_candidates(unit(7), limit=3, where=CandidateFilter(model="m"))
    assert hits[0].id == "c7"


def test_export_pages_through_every_row(pg_store, monkeypatch):
    """Keyset pages of 2 rows (500 in use): files, chunks and cache entries past the first page
    (the key of the last row goes back as parameters; sent as a record, the server refused
    it, so exporting more than one page failed)."""
    from openmemd.store.postgres import reader as pg_reader

    monkeypatch.setattr(pg_reader, "EXPORT_BATCH", 2)
    store = pg_store()
    docs = {f"f{i}.md": [row(f"c{i}-{k}", f"f{i}.md", f"note {i} {k}", unit(i * 3 + k))
                         for k in range(3)] for i in range(5)}
    w = fill(store, docs)
    with w.transaction():
        w.cache_store(CacheKey("local", "m", "k"), [(f"h{i}", unit(i)) for i in range(5)], 9)
    r = store.reader()
    assert [f.path for f in r.export_files()] == [f"f{i}.md" for i in range(5)]
    assert [c.id for c in r.export_chunks()] == [f"c{i}-{k}" for i in range(5) for k in range(3)]
    assert [e.hash for e in r.export_cache()] == [f"h{i}" for i in range(5)]


def test_a_rebuild_swap_slower_than_the_bulk_timeout_completes(pg_store, pg_url, monkeypatch):
    """The swap renames every staging row (with an HNSW index, ~7 ms a row: hours at 1M); a
    timeout there would discard the finished rebuild at its last step. Here a row lock makes
    the swap wait past a shortened bulk timeout."""
    from openmemd.store.postgres import store as pg_store_module

    monkeypatch.setattr(pg_store_module, "BULK_TIMEOUT_SQL",
                        "SET LOCAL statement_timeout = '300ms'")
    store = pg_store()
    fill(store, {"a.md": [row("a", "a.md", "old text here", unit(1))]})
    blocker = psycopg.connect(pg_url)
    release = threading.Timer(1.5, blocker.commit)

    def build(w):
        with w.transaction():
            w.upsert_file("b.md", "memory", "fh", 1, 1, 1, 1)
            w.replace_chunks("b.md", [row("b", "b.md", "new text here", unit(2))])
        blocker.execute("SELECT 1 FROM openmemd.chunks WHERE id = 'b' FOR UPDATE")
        release.start()

    try:
        store.rebuild(build)
    finally:
        release.join()
        blocker.close()
    assert set(store.reader().stored_files()) == {"b.md"}
