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


def search(d, query: str) -> list[dict]:
    with d.client() as c:
        return c.search(query, min_score=0.0)["results"]


def hits(d, query: str) -> set[tuple[str, str]]:
    return {(r["path"], r.get("namespace", "")) for r in search(d, query)}


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


def test_a_daemon_of_another_workspace_does_not_take_over_a_stopped_ones_namespace(
        pg_url: str) -> None:
    """Once alice's daemon stopped, a daemon configured with her namespace for another
    workspace took the free writer lock and replaced her index with its own workspace's
    (2,340 -> 65 chunks). Now it is refused, one line naming both workspaces, her rows stay
    searchable as they were, and only `openmemd store adopt` hands the namespace over."""
    with ExitStack() as stack:
        alice = stack.enter_context(daemon(config(pg_url, "team/alice")))
        (alice.workspace / "MEMORY.md").write_text("# Memory\n\nA kettle for Ana.\n")
        (alice.workspace / "memory" / "2026-12-01.md").write_text("Deploy freeze Friday.\n")
        alice.start()
        assert wait_for(lambda: ("memory/2026-12-01.md", "team/alice") in hits(alice, "freeze"),
                        60)
        assert alice.stop() == 0

        other = stack.enter_context(daemon(config(pg_url, "team/alice")))
        (other.workspace / "MEMORY.md").write_text("# Memory\n\nThe other kettle.\n")
        other.start()
        host = socket.gethostname()
        hers, its = f"{host}:{alice.workspace.resolve()}", f"{host}:{other.workspace.resolve()}"

        def refused(d) -> list[str]:
            with d.client() as c:
                return [p for p in c.status()["problems"] if "is filled from" in p]

        assert wait_for(lambda: bool(refused(other)), 60)
        line = refused(other)[0]
        assert f"is filled from {hers}; this workspace is {its}" in line
        assert "openmemd store adopt" in line and "\n" not in line
        assert f"is filled from {hers}" in other.cli("status").stdout
        # her index is as she left it, and still searchable (by the other daemon too)
        assert hits(other, "freeze") == {("memory/2026-12-01.md", "team/alice")}
        assert hits(other, "kettle") == {("MEMORY.md", "team/alice")}
        assert other.cli("index").returncode != 0

        adopted = other.cli("store", "adopt")
        assert adopted.returncode == 0, adopted.stderr
        assert f"it was filled from {hers}" in adopted.stdout
        assert other.cli("index").returncode == 0
        assert wait_for(lambda: hits(other, "freeze") == set(), 60)  # its own notes now
        # and alice's daemon, started again once it stopped, is the one refused
        assert other.stop() == 0
        alice.start()
        assert wait_for(lambda: bool(refused(alice)), 60)
        assert f"is filled from {its}; this workspace is {hers}" in refused(alice)[0]
        assert hits(alice, "kettle") == {("MEMORY.md", "team/alice")}
        assert [r["snippet"] for r in search(alice, "kettle")] == [
            "# Memory\n\nThe other kettle."]
        assert alice.stop() == 0
