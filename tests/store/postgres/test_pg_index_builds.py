"""The indexes `maintain()` builds in the background (HNSW, the keyword sample), when daemons
share a database: a build killed half-way is redone, one in progress elsewhere is left alone."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from pg_rows import fill, row, unit

from openmemd.store.base import CandidateFilter, IndexDamagedError
from openmemd.store.postgres import schema

HNSW = f"openmemd.{schema.HNSW_PREFIX}8"


@pytest.fixture(autouse=True)
def small_threshold(monkeypatch):
    monkeypatch.setattr(schema, "HNSW_MIN_VECTORS", 30)


def notes(n: int, prefix: str = "f") -> dict:
    return {f"{prefix}{i}.md": [row(f"{prefix}{i}", f"{prefix}{i}.md", f"note {i}", unit(i))]
            for i in range(n)}


def index_state(conn: psycopg.Connection) -> tuple[int, bool] | None:
    """(oid, valid) of the HNSW index, or None."""
    got = conn.execute("SELECT indexrelid::int, indisvalid FROM pg_index"
                       " WHERE indexrelid = to_regclass(%s)", (HNSW,)).fetchone()
    return None if got is None else (int(got[0]), bool(got[1]))


def test_an_hnsw_index_a_killed_build_left_invalid_is_rebuilt_on_the_next_start(pg_store):
    store = pg_store()
    fill(store, notes(40))
    store.maintain()
    assert store.wait_for_builds(60)
    store.close()
    restarted = pg_store()
    with restarted._pool.connection() as conn:
        # what a CREATE INDEX CONCURRENTLY killed half-way leaves: the index, marked invalid
        conn.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass",
                     (HNSW,))
        killed = index_state(conn)
    assert killed is not None and killed[1] is False
    restarted.writer()  # as the daemon starts: the store is readied, then written and kept up
    fill(restarted, {"g.md": [row("g", "g.md", "one more note", unit(3))]})
    restarted.maintain()
    assert restarted.wait_for_builds(60)
    with restarted._pool.connection() as conn:
        rebuilt = index_state(conn)
    assert rebuilt is not None and rebuilt[1] is True and rebuilt[0] != killed[0]


def test_an_hnsw_index_lost_with_pgvector_is_built_again_without_a_restart(pg_store, pg_url):
    store = pg_store()
    fill(store, notes(40))
    store.maintain()
    assert store.wait_for_builds(60)
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("DROP EXTENSION vector CASCADE")  # the graph goes with the columns
    with pytest.raises(IndexDamagedError):
        store.writer().pending_vectors("m", 100)
    pending = store.writer().pending_vectors("m", 100)  # repaired: every vector to embed
    store.writer().set_vectors([(p.id, unit(i)) for i, p in enumerate(pending)])
    store.maintain()  # once known to exist, the index was never looked for again
    assert store.wait_for_builds(60)
    with store._pool.connection() as conn:
        state = index_state(conn)
    assert state is not None and state[1] is True
    hits = store.reader().vector_candidates(unit(0), limit=3, where=CandidateFilter())
    assert len(hits) == 3


@contextmanager
def build_held(pg_url: str, store) -> Iterator[tuple[psycopg.Connection, psycopg.Connection,
                                                     tuple[int, bool]]]:
    """`store.maintain()` with its HNSW build held in its last phase by an open snapshot --
    what a 20-minute build at 1M chunks looks like meanwhile. Yields (blocker, a connection to
    look with, the index's (oid, valid))."""
    with psycopg.connect(pg_url, autocommit=True) as blocker, \
            psycopg.connect(pg_url, autocommit=True) as look:
        blocker.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        blocker.execute("SELECT count(*) FROM openmemd.chunks")
        store.maintain()  # returns: the build runs on a thread of its own
        deadline = time.monotonic() + 30
        while (state := index_state(look)) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state is not None and state[1] is False  # being built
        yield blocker, look, state
        blocker.execute("ROLLBACK")


def test_writes_go_on_while_the_index_builds(pg_store, pg_url):
    store = pg_store()
    fill(store, notes(40))
    with build_held(pg_url, store) as (blocker, look, state):
        assert store.status()["indexBuilding"] == f"{schema.HNSW_PREFIX}8"
        fill(store, notes(5, "g"))  # the writer is not held up by the build
        hits = store.reader().vector_candidates(unit(2), limit=1, where=CandidateFilter(model="m"))
        assert [h.id for h in hits] == ["f2"]  # searched by exact scan meanwhile
        assert not store.wait_for_builds(0.5)
        blocker.execute("COMMIT")
        assert store.wait_for_builds(60)
        assert index_state(look) == (state[0], True)
    assert "indexBuilding" not in store.status()


def test_closing_cancels_a_build_and_the_next_start_redoes_it(pg_store, pg_url):
    store = pg_store()
    fill(store, notes(40))
    with build_held(pg_url, store) as (_, look, state):
        closing = threading.Thread(target=store.close)
        closing.start()
        closing.join(timeout=20)
        assert not closing.is_alive()  # `openmemd stop` does not wait out a build
        assert index_state(look) == state  # left invalid
    restarted = pg_store()
    fill(restarted, notes(1, "g"))
    restarted.maintain()
    assert restarted.wait_for_builds(60)
    with psycopg.connect(pg_url) as look:
        rebuilt = index_state(look)
    assert rebuilt is not None and rebuilt[1] is True and rebuilt[0] != state[0]


def test_a_daemon_starting_during_another_daemons_build_leaves_the_build_alone(pg_store, pg_url):
    builder, other = pg_store(agent="a"), pg_store(agent="b")
    fill(builder, notes(40))
    fill(other, notes(1, "g"))
    with build_held(pg_url, builder) as (blocker, look, state):
        other_done = threading.Thread(target=lambda: (other.maintain(), other.wait_for_builds()))
        other_done.start()
        other_done.join(timeout=20)
        # Its build thread neither waited for the build (its DROP would have, then thrown the
        # index away) nor touched it, and its ANALYZE did not queue behind it.
        assert not other_done.is_alive()
        assert index_state(look) == state
        blocker.execute("COMMIT")
        assert builder.wait_for_builds(60)
        assert index_state(look) == (state[0], True)
        # A third daemon finds it built and keeps it.
        third = pg_store(agent="c")
        fill(third, notes(1, "h"))
        third.maintain()
        assert third.wait_for_builds(60)
        assert index_state(look) == (state[0], True)


def test_an_index_left_to_another_daemon_is_looked_at_again_without_new_rows(pg_store, pg_url):
    store = pg_store()
    fill(store, notes(40))
    key = f"openmemd-index:{schema.HNSW_PREFIX}8"
    with psycopg.connect(pg_url, autocommit=True) as other:
        # another daemon holds the build (and is killed before it creates the index)
        other.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
        store.maintain()
        assert store.wait_for_builds(60)
        assert index_state(other) is None
    # no new rows since, so upkeep would otherwise wait for MAINTAIN_AFTER_ROWS of them
    store.maintain()
    assert store.wait_for_builds(60)
    with psycopg.connect(pg_url) as look:
        state = index_state(look)
    assert state is not None and state[1] is True


def test_a_rebuilds_staging_rows_join_the_graph_once_at_the_swap(pg_store, pg_url):
    """Inserting a row into the HNSW graph costs ~30 plain inserts. A rebuild's staging rows
    are never searched, so they are written without their vector size (outside the partial
    index); the swap, which rewrites every row anyway, gives it back."""
    store = pg_store()
    fill(store, notes(40))
    store.maintain()
    assert store.wait_for_builds(60)
    sizes = ("SELECT id, dims FROM openmemd.chunks WHERE ns = %s AND embedding IS NOT NULL"
             " ORDER BY id")
    staged: list[tuple] = []

    def build(w):
        with w.transaction():
            for i in range(40):
                w.upsert_file(f"r{i}.md", "memory", "fh", 1, 1, 1, 1)
                w.replace_chunks(f"r{i}.md", [row(f"r{i}", f"r{i}.md", f"new {i}", unit(100 + i))])
            w.replace_chunks("late.md", [row("late", "late.md", "embedded later")])
            w.upsert_file("late.md", "memory", "fh", 1, 1, 1, 1)
        with w.transaction():
            w.set_vectors([("late", unit(7))])  # a vector filled in after the rows
        with psycopg.connect(pg_url) as conn:
            staged.extend(conn.execute(sizes, (w.ns,)).fetchall())

    store.rebuild(build)
    assert len(staged) == 41 and {d for _, d in staged} == {None}  # out of the graph
    with psycopg.connect(pg_url) as conn:
        swapped = conn.execute(sizes, ("host/main",)).fetchall()
    assert [i for i, _ in swapped] == sorted(["late", *(f"r{i}" for i in range(40))])
    assert {d for _, d in swapped} == {8}  # in the index (its predicate is dims = 8)
    hits = store.reader().vector_candidates(unit(7), limit=1, where=CandidateFilter(model="m"))
    assert [h.id for h in hits] == ["late"]
