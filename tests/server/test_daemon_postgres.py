"""End to end on PostgreSQL: the real daemon with `[store] backend = "postgres"` on the embedded
server indexes a tiny workspace and answers over its socket; with the server stopped it keeps
running, searches answer `unavailable` and status is degraded with the reason; once the server
is back, searches work again."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from daemon_harness import DEBOUNCE_MS, Daemon, make_daemon
from helpers import wait_for
from openmemd.client import RemoteError

SECRET = "pw-never-shown"


@pytest.fixture
def pg_daemon(pg_url: str) -> Iterator[Daemon]:
    url = pg_url.replace("postgresql://postgres@", f"postgresql://postgres:{SECRET}@")
    yield from make_daemon(
        f'[embedding]\nprovider = "none"\n[sync]\nwatch_debounce_ms = {DEBOUNCE_MS}\n'
        f'[store]\nbackend = "postgres"\nurl = "{url}"\nnamespace = "team/{{agent}}"\n'
        'statement_timeout_ms = 5000\n')


def found(d: Daemon, query: str) -> set[str]:
    with d.client() as c:
        return {r["path"] for r in c.search(query, min_score=0.0)["results"]}


def test_indexes_and_searches_over_the_socket(pg_daemon: Daemon) -> None:
    (pg_daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    pg_daemon.start()
    assert wait_for(lambda: "MEMORY.md" in found(pg_daemon, "pelican"), 60)
    (pg_daemon.workspace / "memory" / "2024-05-01.md").write_text("Deploy freeze on Friday.\n")
    assert wait_for(lambda: "memory/2024-05-01.md" in found(pg_daemon, "freeze"), 60)
    with pg_daemon.client() as c:
        st = c.status()
    assert st["health"] == "healthy", st["problems"]
    store = st["agents"]["main"]["store"]
    assert store["backend"] == "postgres" and store["namespace"] == "team/main"
    assert store["reachable"] and store["serverVersion"].startswith("18")
    assert store["pgvectorVersion"] and "***" in store["url"]
    text = pg_daemon.cli("status").stdout
    assert "namespace team/main" in text and f"pgvector {store['pgvectorVersion']}" in text
    assert pg_daemon.stop() == 0
    logs = pg_daemon.stdout() + pg_daemon.stderr()
    assert "team/main" in logs and SECRET not in logs and SECRET not in str(st)
    # the index lives on the server only: no SQLite file beside it
    assert not list((pg_daemon.root / "state").rglob("*.sqlite*"))


def test_server_outage_is_unavailable_then_converges(pg_daemon: Daemon, pg_server) -> None:
    (pg_daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    pg_daemon.start()
    assert wait_for(lambda: "MEMORY.md" in found(pg_daemon, "pelican"), 60)
    pg_server.stop()
    try:
        with pg_daemon.client() as c, pytest.raises(RemoteError) as err:
            c.search("pelican")
        assert err.value.code == "unavailable", err.value
        assert "PostgreSQL" in str(err.value) and SECRET not in str(err.value)
        with pg_daemon.client() as c:
            st = c.status()
        assert st["health"] == "degraded"
        assert any("PostgreSQL" in p for p in st["problems"]), st["problems"]
        assert SECRET not in str(st)
        # an edit while the server is down is picked up once it is back
        (pg_daemon.workspace / "memory" / "2024-05-02.md").write_text("Walrus sighting.\n")
        # and so is a note added meanwhile: saved, said not indexed yet, never an error (an
        # agent would add it again)
        with pg_daemon.client() as c:
            note = c.add("The heron nests by the weir.")
        assert note["indexed"] is False and "PostgreSQL" in note["indexError"], note
        added = pg_daemon.cli("add", "The otter visits at dusk.")
        assert added.returncode == 0 and "saved, not indexed yet" in added.stderr, added
    finally:
        pg_server.start()
    assert wait_for(lambda: "MEMORY.md" in found(pg_daemon, "pelican"), 60)
    assert wait_for(lambda: "memory/2024-05-02.md" in found(pg_daemon, "walrus"), 120)
    daily = pg_daemon.workspace / note["path"]
    assert wait_for(lambda: note["path"] in found(pg_daemon, "heron weir"), 60)
    assert wait_for(lambda: note["path"] in found(pg_daemon, "otter dusk"), 60)
    text = daily.read_text()
    assert text.count("heron") == 1 and text.count("otter") == 1
    assert pg_daemon.ready()
    # the outage was logged, tracebacks and all, and the password never was
    logs = pg_daemon.stdout() + pg_daemon.stderr()
    assert "indexer_reconcile_failed" in logs and "Connection refused" in logs
    assert SECRET not in logs


def test_tables_dropped_from_under_it_are_created_again_and_refilled(pg_daemon: Daemon,
                                                                       pg_url: str) -> None:
    import psycopg

    from daemon_harness import finds

    (pg_daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    (pg_daemon.workspace / "memory" / "2024-05-01.md").write_text("Deploy freeze on Friday.\n")
    pg_daemon.start()
    assert wait_for(lambda: "memory/2024-05-01.md" in found(pg_daemon, "freeze"), 60)
    with psycopg.connect(pg_url, autocommit=True) as admin:  # a restore gone wrong, say
        admin.execute("DROP TABLE openmemd.chunks; DROP TABLE openmemd.ns_lexemes")
    seen: list[str] = []
    assert wait_for(finds(pg_daemon, "pelican", "MEMORY.md", seen), 60), seen
    assert wait_for(finds(pg_daemon, "freeze", "memory/2024-05-01.md", seen), 60), seen
    assert seen and all("damaged" in s and "rebuilt from the Markdown" in s for s in seen), seen
    with pg_daemon.client() as c:
        st = c.status()
    assert st["health"] == "healthy", st["problems"]
    assert st["agents"]["main"]["files"]["indexed"] == 2
    logs = pg_daemon.stdout() + pg_daemon.stderr()
    assert "store_schema_repaired" in logs and SECRET not in logs


def test_a_daemon_whose_namespace_another_repair_emptied_indexes_it_again(
        pg_daemon: Daemon, pg_url: str) -> None:
    """Two daemons share the database; A repairs the lost tables (emptying every namespace).
    B met no error and runs no periodic reconcile, yet its notes come back: its reader hears
    of the repair (schema meta `content_generation`) and its writer re-indexes."""
    import psycopg

    from daemon_harness import finds

    other = make_daemon(
        f'[embedding]\nprovider = "none"\n[sync]\nwatch_debounce_ms = {DEBOUNCE_MS}\n'
        'reconcile_minutes = 0\n'
        f'[store]\nbackend = "postgres"\nurl = "{pg_url}"\nnamespace = "team/b-{{agent}}"\n')
    b = next(other)
    try:
        (pg_daemon.workspace / "MEMORY.md").write_text("The launch codeword is pelican.\n")
        (b.workspace / "MEMORY.md").write_text("The walrus sleeps in the boathouse.\n")
        pg_daemon.start()
        b.start()
        assert wait_for(lambda: "MEMORY.md" in found(pg_daemon, "pelican"), 60)
        assert wait_for(lambda: "MEMORY.md" in found(b, "walrus"), 60)
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("DROP TABLE openmemd.chunks")
        seen: list[str] = []
        assert wait_for(finds(pg_daemon, "pelican", "MEMORY.md", seen), 60), seen  # A repairs
        with b.client() as c:  # B's status reads the store: that must not take the news
            assert c.status()["agents"]["main"]["store"]["reachable"]
        seen_b: list[str] = []
        assert wait_for(finds(b, "walrus", "MEMORY.md", seen_b), 60), seen_b
        # Told by its reader; unless B's own upkeep ran into the dropped table first (its
        # first reconcile's, late on a slow machine), and B healed without being told.
        logs = b.stdout() + b.stderr()
        assert "emptied by a repair" in logs or "store_namespace_emptied" in logs, seen_b
    finally:
        next(other, None)
