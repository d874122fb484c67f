"""A namespace is one workspace's index: a writer for another workspace is refused, in one line
naming both, and the namespace is left as it is; `adopt` hands it over on purpose.

Before, once the daemon writing a namespace was gone, a daemon configured with the same
namespace for another workspace took it and synced it to its own Markdown: every note of the
first workspace was deleted from the index (2,340 -> 65 chunks).
"""

from __future__ import annotations

import re
import socket

import pytest

from openmemd import cli
from openmemd.api import MemoryIndex
from openmemd.errors import IndexLockedError
from openmemd.store.postgres.owner import NamespaceOwnedError

HOST = socket.gethostname()


def notes(ws, **files: str):
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (ws / "memory" / f"{name}.md").write_text(text, encoding="utf-8")
    return ws


def stored(index: MemoryIndex) -> set[str]:
    return set(index.store.reader().stored_files())


def test_another_workspace_is_refused_until_it_adopts_the_namespace(pg_settings, tmp_path):
    settings = pg_settings('search_namespaces = ["host/{agent}", "host/main"]\n'
                           f'[agents.team]\nworkspace = "{tmp_path / "team"}"\n')
    alice = notes(tmp_path / "alice", a1="Kettle for Ana.", a2="Deploy freeze on Friday.",
                  a3="Walrus at the pier.")
    bob = notes(tmp_path / "bob", b1="Bob's only note about the walrus.")
    mine = {"memory/a1.md", "memory/a2.md", "memory/a3.md"}
    with MemoryIndex.open(alice, config=settings) as index:
        assert index.sync().indexed == 3

    # bob's workspace, configured with alice's namespace: refused, nothing written
    with MemoryIndex.open(bob, config=settings) as intruder:
        with pytest.raises(NamespaceOwnedError) as refused:
            intruder.sync()
        assert stored(intruder) == mine
        # what it can still do is read: the index as alice's workspace left it
        assert {h.path for h in intruder.search("walrus", min_score=0.0)} == {"memory/a3.md"}
    message = str(refused.value)
    assert "\n" not in message
    assert f"{HOST}:{alice.resolve()}" in message and f"{HOST}:{bob.resolve()}" in message
    assert "'host/main'" in message and "openmemd store adopt" in message
    assert isinstance(refused.value, IndexLockedError)  # as for a namespace being written

    # alice's workspace again (a restart), through a symlink to it: the same workspace
    (tmp_path / "link").symlink_to(alice)
    (alice / "memory" / "a4.md").write_text("Fourth note.", encoding="utf-8")
    with MemoryIndex.open(tmp_path / "link", config=settings) as index:
        assert index.sync().indexed == 1
        index.sync(force=True)  # a rebuild swaps the namespace: it stays alice's
    mine.add("memory/a4.md")

    # a team member searching alice's namespace beside its own: not affected
    team = notes(tmp_path / "team", t1="Team note.")
    with MemoryIndex.open(team, config=settings, agent_id="team") as member:
        member.sync()
        assert {(h.path, h.namespace) for h in member.search("walrus", min_score=0.0)} == {
            ("memory/a3.md", "host/main")}

    # a second process of alice's workspace waits for the writer lock, then writes
    with MemoryIndex.open(alice, config=settings) as first, \
            MemoryIndex.open(alice, config=settings) as second:
        first.sync()
        with pytest.raises(IndexLockedError, match="being written by another") as busy:
            second.sync()
        assert not isinstance(busy.value, NamespaceOwnedError)
        # adopting is refused while a writer holds the namespace
        with MemoryIndex.open(bob, config=settings) as intruder, \
                pytest.raises(IndexLockedError, match="being written by another"):
            intruder.store.adopt()
        first.close()
        assert second.sync().unchanged == 4

    # bob adopts it: his workspace fills it from now on, and alice's is refused
    with MemoryIndex.open(bob, config=settings) as new_owner:
        assert new_owner.store.adopt() == f"{HOST}:{alice.resolve()}"
        new_owner.sync()
        assert stored(new_owner) == {"memory/b1.md"}
    bobs = re.escape(f"filled from {HOST}:{bob.resolve()}")
    with MemoryIndex.open(alice, config=settings) as index, \
            pytest.raises(NamespaceOwnedError, match=bobs):
        index.sync()


def test_store_adopt_is_one_line_where_there_is_nothing_to_adopt(make_settings, capsys):
    sqlite = make_settings()  # the default backend: an index file of this state dir
    for args, says in ((["store", "adopt"], "nothing to adopt"),
                       (["store", "adopt", "--to", "x.sqlite"], "not --to"),
                       (["store", "copy", "--to", "x.sqlite"], "needs --from and --to")):
        assert cli.main([*args, "--config", str(sqlite.config_file)]) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1 and "Traceback" not in err
