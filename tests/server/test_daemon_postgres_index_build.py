"""The HNSW build as a real daemon runs it: a database already holding 20,000 vectors (another
namespace's, loaded while no daemon ran) gets its index from the daemon's upkeep right after
its first sync, not an hour later; while the build runs, status says so and searches answer;
stopping the daemon cancels the build, and the next start builds it again."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from daemon_harness import DEBOUNCE_MS, Daemon, finds, make_daemon
from helpers import wait_for
from openmemd.store.postgres import schema

daemon = contextmanager(make_daemon)
INDEX = f"{schema.HNSW_PREFIX}8"
NOTE = "# Memory\n\nThe kestrel nests on the north roof.\n"


def prefill(url: str) -> None:
    """The schema, and HNSW_MIN_VECTORS 8-dim vectors in another namespace."""
    with psycopg.connect(url, autocommit=True) as conn:
        schema.ensure_schema(conn)
        conn.execute(
            "INSERT INTO openmemd.chunks(ns, id, path, start_line, end_line, hash, model, text,"
            " fts, doclen, embedding, dims, updated_at)"
            " SELECT 'team/bulk', 'c' || i, 'f' || i / 10 || '.md', 1, 1, 'h' || i, 'm',"
            " 'note ' || i, to_tsvector('simple', 'note ' || i), 2,"
            " ARRAY(SELECT random() + i * 0 FROM generate_series(1, 8))::real[]::vector, 8, 0"
            " FROM generate_series(1, %s) i", (schema.HNSW_MIN_VECTORS,))


def index_state(conn: psycopg.Connection) -> tuple[int, bool] | None:
    """(oid, valid) of the HNSW index, or None."""
    row = conn.execute("SELECT indexrelid::int, indisvalid FROM pg_index"
                       " WHERE indexrelid = to_regclass(%s)", (f"openmemd.{INDEX}",)).fetchone()
    return None if row is None else (int(row[0]), bool(row[1]))


def index_valid(conn: psycopg.Connection) -> bool | None:
    state = index_state(conn)
    return None if state is None else state[1]


def store_status(d) -> dict:
    with d.client() as c:
        return c.status()["agents"]["main"]["store"]


def config(url: str) -> str:
    return (f'[embedding]\nprovider = "none"\n[sync]\nwatch_debounce_ms = {DEBOUNCE_MS}\n'
            f'[store]\nbackend = "postgres"\nurl = "{url}"\nnamespace = "team/a"\n')


def hold_builds(url: str) -> psycopg.Connection:
    """An open snapshot: it holds a concurrent build in its last phase (what a 20-minute build
    at 1M chunks looks like meanwhile) until it ends."""
    blocker = psycopg.connect(url, autocommit=True)
    blocker.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    blocker.execute("SELECT count(*) FROM openmemd.chunks")
    return blocker


@contextmanager
def daemon_during_a_build(url: str) -> Iterator[tuple[Daemon, psycopg.Connection,
                                                       psycopg.Connection]]:
    """A daemon started on a prefilled database, its HNSW build held (being built) by an open
    snapshot; yields (daemon, a connection to look with, the blocker)."""
    prefill(url)
    with psycopg.connect(url, autocommit=True) as look, hold_builds(url) as blocker, \
            daemon(config(url)) as d:
        (d.workspace / "MEMORY.md").write_text(NOTE)
        d.start()
        assert wait_for(lambda: index_valid(look) is False, 60)  # being built
        yield d, look, blocker


def test_the_daemon_builds_the_vector_index_after_its_first_sync(pg_url):
    with daemon_during_a_build(pg_url) as (d, look, blocker):
        assert store_status(d).get("indexBuilding") == INDEX
        assert wait_for(finds(d, "kestrel", "MEMORY.md", []), 30)  # searches go on
        assert "building index" in d.cli("status").stdout
        started = time.monotonic()
        assert d.stop() == 0  # cancels the build; does not wait for it
        assert time.monotonic() - started < 15
        assert index_valid(look) is False  # cancelled half-way: left invalid
        blocker.execute("ROLLBACK")

        d.start()  # nothing to write this time: the first sync's upkeep redoes the build
        assert wait_for(lambda: index_valid(look) is True, 60), store_status(d)
        assert wait_for(lambda: "indexBuilding" not in store_status(d), 30)
        assert "indexBuildError" not in store_status(d)
        assert wait_for(finds(d, "kestrel", "MEMORY.md", []), 30)
        assert d.stop() == 0


def test_a_daemon_killed_mid_build_leaves_the_build_to_finish_and_keeps_it(pg_url):
    """kill -9 cannot cancel anything: the server finishes the build the dead daemon started
    (it holds the build's lock until then), and the next daemon keeps that index."""
    with daemon_during_a_build(pg_url) as (d, look, blocker):
        assert d.stop(signal.SIGKILL) == -signal.SIGKILL
        blocker.execute("ROLLBACK")
        assert wait_for(lambda: index_valid(look) is True, 60)  # finished, by the server
        built = index_state(look)

        d.start()
        assert wait_for(finds(d, "kestrel", "MEMORY.md", []), 30)
        assert wait_for(lambda: "indexBuilding" not in store_status(d), 30)
        assert "indexBuildError" not in store_status(d)
        assert index_state(look) == built  # kept, not built again
        assert d.stop() == 0
