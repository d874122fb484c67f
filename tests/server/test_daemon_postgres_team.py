"""A team on one PostgreSQL database, end to end: two real daemons, each writing its own
namespace from its own workspace, one also searching the other's; a third daemon started for
a namespace already being written is refused, and the refusal names the daemon holding it."""

from __future__ import annotations

import socket
from contextlib import ExitStack, contextmanager

from daemon_harness import DEBOUNCE_MS, make_daemon
from helpers import wait_for

daemon = contextmanager(make_daemon)


def config(url: str, namespace: str, searched: str = "") -> str:
    return (f'[embedding]\nprovider = "none"\n[sync]\nwatch_debounce_ms = {DEBOUNCE_MS}\n'
            f'[store]\nbackend = "postgres"\nurl = "{url}"\nnamespace = "{namespace}"\n'
            f'{searched}')


def hits(d, query: str) -> set[tuple[str, str]]:
    with d.client() as c:
        return {(r["path"], r.get("namespace", "")) for r in
                c.search(query, min_score=0.0)["results"]}


def test_two_daemons_share_one_database_and_a_third_is_refused(pg_url: str) -> None:
    with ExitStack() as stack:
        alice = stack.enter_context(daemon(config(
            pg_url, "team/alice", 'search_namespaces = ["team/alice", "team/bob"]\n')))
        bob = stack.enter_context(daemon(config(pg_url, "team/bob")))
        (alice.workspace / "MEMORY.md").write_text("# Memory\n\nA kettle for Ana.\n")
        (bob.workspace / "MEMORY.md").write_text("# Memory\n\nDeploy freeze from Friday.\n")
        alice.start()
        bob.start()
        # alice finds bob's note, attributed to his namespace; bob searches only his own
        assert wait_for(lambda: ("MEMORY.md", "team/bob") in hits(alice, "freeze"), 60)
        assert wait_for(lambda: ("MEMORY.md", "team/alice") in hits(alice, "kettle"), 60)
        assert hits(bob, "kettle") == set()
        # an edit of bob's reaches alice's searches through the database
        (bob.workspace / "memory" / "2026-12-01.md").write_text("Walrus sighting at the pier.\n")
        assert wait_for(lambda: ("memory/2026-12-01.md", "team/bob") in hits(alice, "walrus"),
                        60)
        # alice reads that hit through her daemon: bob's lines, from the shared index
        with alice.client() as c:
            got = c.get("memory/2026-12-01.md#L1", namespace="team/bob")
        assert (got["text"], got["namespace"]) == ("Walrus sighting at the pier.", "team/bob")

        # A second daemon for bob's namespace (another host, or a copy of his config): it
        # serves, degraded, and writes nothing -- its empty workspace would delete his rows.
        second_bob = stack.enter_context(daemon(config(pg_url, "team/bob")))
        second_bob.start()
        assert bob.proc is not None
        holder = f"openmemd writer {socket.gethostname()}:{bob.proc.pid}, from 127.0.0.1"

        def refused() -> list[str]:
            with second_bob.client() as c:
                st = c.status()
            return [p for p in st["problems"] if "being written by another openmemd" in p]

        assert wait_for(lambda: bool(refused()), 60)
        assert holder in refused()[0] and "team/bob" in refused()[0]
        assert "being written by another openmemd" in second_bob.cli("status").stdout
        assert ("MEMORY.md", "team/bob") in hits(alice, "freeze")  # his rows are untouched
        for d in (second_bob, bob, alice):
            assert d.stop() == 0
