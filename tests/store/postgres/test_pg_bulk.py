"""The writer's batches (bulk.py) under the query timeout: a batch is a write of known size,
bounded by the bulk timeout, while the writer's other statements keep the query timeout."""

from __future__ import annotations

import threading

import psycopg
from pg_rows import fill, row, unit


def test_a_batch_slower_than_the_query_timeout_is_written(pg_store, pg_url):
    store = pg_store("statement_timeout_ms = 300")
    w = fill(store, {"a.md": [row("a", "a.md", "first note", unit(1))]})
    with psycopg.connect(pg_url) as blocker:
        # A batch statement that takes longer than the query timeout: here it waits 1.5 s for a
        # row lock; in real use, 2,000 rows each added to a big HNSW graph take ~20 s.
        blocker.execute("SELECT 1 FROM openmemd.ns_stats WHERE ns = 'host/main' FOR UPDATE")
        release = threading.Timer(1.5, blocker.commit)
        release.start()
        try:
            with w.transaction():
                w.upsert_file("b.md", "memory", "fh", 1000, 10, 5, 8)
                w.replace_chunks("b.md", [row("b", "b.md", "second note", unit(2))])
                assert w.file_hash("b.md") == "fh"  # the batch is written before this read
                # and the writer's own statements are back under the query timeout
                timeout = w._conn().execute("SHOW statement_timeout").fetchone()
                assert timeout == ("300ms",)
        finally:
            release.join()
    assert {c.id for c in store.reader().export_chunks()} == {"a", "b"}
