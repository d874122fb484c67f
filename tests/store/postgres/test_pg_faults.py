"""Outages, the statement timeout, schema versions and the password: a real server stopped and
started again (never a mock)."""

from __future__ import annotations

import threading

import psycopg
import pytest
from pg_rows import fill, row, unit

from openmemd.store.base import CandidateFilter, StoreUnavailableError
from openmemd.store.postgres.connect import PgConnectSpec, connect
from openmemd.store.postgres.schema import SCHEMA, SchemaTooNewError
from openmemd.text.tokens import query_terms

SECRET = "s3cret-pw"


@pytest.fixture
def secret_url(pg_server, pg_url):
    # trust authentication accepts any password: enough to see where the URL's copy goes
    return pg_url.replace("postgresql://postgres@", f"postgresql://postgres:{SECRET}@")


def test_server_down_then_back(pg_server, pg_store, secret_url):
    store = pg_store(url=secret_url)
    fill(store, {"a.md": [row("a", "a.md", "kafka consumer lag", unit(1))]})
    terms = query_terms("kafka")
    assert store.reader().keyword_candidates(terms, limit=3, where=CandidateFilter())
    pg_server.stop()
    try:
        with pytest.raises(StoreUnavailableError) as read_err:
            store.reader().keyword_candidates(terms, limit=3, where=CandidateFilter())
        with pytest.raises(StoreUnavailableError) as write_err:
            fill(store, {"b.md": [row("b", "b.md", "kafka broker", unit(2))]})
        status = store.status()
        assert status["reachable"] is False and status["error"]
        for text in (str(read_err.value), str(write_err.value), str(status), store.location()):
            assert SECRET not in text
            assert "unavailable" in text or "***" in text or "127.0.0.1" in text
    finally:
        pg_server.start()
    # the pool and the writer reconnect (and re-lock) by themselves
    fill(store, {"b.md": [row("b", "b.md", "kafka broker", unit(2))]})
    hits = store.reader().keyword_candidates(terms, limit=3, where=CandidateFilter())
    assert {h.id for h in hits} == {"a", "b"}
    status = store.status()
    assert status["reachable"] is True and status["serverVersion"].startswith("18")
    assert status["pgvectorVersion"] and status["namespace"] == "host/main"
    assert SECRET not in str(status) and "***" in status["url"]


def test_down_at_open(pg_server, pg_settings):
    from openmemd.store.postgres import open_postgres_store

    url = f"postgresql://postgres:{SECRET}@127.0.0.1:1/none"  # nothing listens on port 1
    store = open_postgres_store(pg_settings(url=url), "main")  # opening does not connect
    try:
        with pytest.raises(StoreUnavailableError, match="unavailable") as err:
            store.reader().stored_files()
        assert SECRET not in str(err.value)
        assert store.vector_mode().available is False
    finally:
        store.close()


def test_statement_timeout_bounds_a_query(pg_store):
    store = pg_store("statement_timeout_ms = 200")
    store.exists()
    with pytest.raises(StoreUnavailableError, match="statement_timeout_ms = 200 ms"):
        store.reader()._run(lambda c: c.execute("SELECT pg_sleep(2)"))


def test_connections_probe_a_silent_peer_unless_the_url_says_otherwise(pg_url):
    # tests/store/postgres/test_pg_vanished_peer.py shows what the probes are for; here, that
    # they reach both ends and that a URL's own choices win, except the statement timeout.
    def settings(url):
        with connect(PgConnectSpec(url, 4000)) as conn:
            names = ("tcp_keepalives_idle", "tcp_keepalives_count", "tcp_user_timeout",
                     "statement_timeout")
            server = tuple(conn.execute(f"SHOW {n}").fetchone()[0] for n in names)
            mine = conn.info.get_parameters()
            return server, (mine.get("keepalives_idle"), mine.get("tcp_user_timeout"))

    assert settings(pg_url) == (("15", "3", "30000", "4s"), ("15", "30000"))
    own = f"{pg_url}?keepalives_idle=60&options=-c%20tcp_keepalives_idle%3D120" \
          "%20-c%20statement_timeout%3D1"
    assert settings(own) == (("120", "3", "30000", "4s"), ("60", "30000"))


def test_a_cancelled_statement_is_not_called_a_timeout(pg_store):
    store = pg_store()
    store.exists()

    def cancelled(conn):
        pid = conn.info.backend_pid
        with psycopg.connect(store.target.url, **store.target.kwargs()) as other:
            threading.Timer(0.3, lambda: other.execute(
                "SELECT pg_cancel_backend(%s)", (pid,))).start()
            return conn.execute("SELECT pg_sleep(5)")

    with pytest.raises(StoreUnavailableError, match="cancelled a statement") as err:
        store.reader()._run(cancelled)
    assert "time limit" not in str(err.value)


def test_newer_schema_is_refused_untouched(pg_store, pg_url):
    store = pg_store()
    assert store.exists() is False  # creates the schema
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"UPDATE {SCHEMA}.meta SET value = '99' WHERE key = 'schema_version'")
    other = pg_store()
    with pytest.raises(SchemaTooNewError, match="version 99"):
        other.reader().stored_files()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute(f"SELECT value FROM {SCHEMA}.meta").fetchone() == ("99",)
