"""The library API on PostgreSQL: a sync, a forced rebuild (staging namespace swapped in) and
searches that carry the namespace; two agents in one database stay apart."""

from __future__ import annotations

from openmemd.api import MemoryIndex


def test_sync_rebuild_and_search(pg_settings, workspace) -> None:
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    (workspace / "memory" / "2024-05-01.md").write_text("Deploy freeze on Friday.\n")
    settings = pg_settings()
    with MemoryIndex.open(workspace, config=settings) as index:
        first = index.sync()
        assert first.indexed == 2
        assert [r.path for r in index.search("pelican", min_score=0.0)] == ["MEMORY.md"]
        rebuilt = index.sync(force=True)
        assert rebuilt.reindexed and rebuilt.chunks == first.chunks
        assert [r.path for r in index.search("freeze", min_score=0.0)] == [
            "memory/2024-05-01.md"]
        assert index.store.reader().stats(None).files == 2  # no staging rows left over
    with MemoryIndex.open(workspace, config=settings, agent_id="main") as again:
        assert again.sync().indexed == 0  # the namespace survived the process


def test_agents_have_their_own_namespaces(pg_settings, workspace, tmp_path) -> None:
    other = tmp_path / "other"
    (other / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("Alpha project notes.\n")
    (other / "MEMORY.md").write_text("Beta project notes.\n")
    settings = pg_settings(f'[agents.ops]\nworkspace = "{other}"\n')
    with MemoryIndex.open(config=settings) as main, \
            MemoryIndex.open(config=settings, agent_id="ops") as ops:
        main.sync()
        ops.sync()
        assert [r.snippet for r in main.search("project", min_score=0.0)] == [
            "Alpha project notes."]
        assert [r.snippet for r in ops.search("project", min_score=0.0)] == [
            "Beta project notes."]


def test_a_shared_namespace_is_searched_and_each_hit_names_its_namespace(
        pg_settings, workspace, tmp_path) -> None:
    # A team's notes: one daemon (agent "team") writes its namespace; a member searches it
    # beside its own.
    shared = tmp_path / "shared"
    (shared / "memory").mkdir(parents=True)
    (shared / "memory" / "2024-05-02.md").write_text("The team's deploy window is Tuesday.\n")
    (workspace / "memory" / "2024-05-01.md").write_text("My own deploy checklist.\n")
    settings = pg_settings(f'search_namespaces = ["host/{{agent}}", "host/team"]\n'
                           f'[agents.team]\nworkspace = "{shared}"\n')
    with MemoryIndex.open(config=settings, agent_id="team") as team:
        team.sync()
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        hits = index.search("deploy", min_score=0.0)
        assert sorted((h.namespace, h.path) for h in hits) == [
            ("host/main", "memory/2024-05-01.md"), ("host/team", "memory/2024-05-02.md")]
        index.flush_recalls()
    # dreaming records only this workspace's own notes, never another namespace's
    recalled = (workspace / "memory" / ".dreams" / "short-term-recall.json").read_text()
    assert "deploy checklist" in recalled and "Tuesday" not in recalled
