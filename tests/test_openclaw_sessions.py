"""Transcripts from OpenClaw's state dir, the delta rule, one dreamer, citations."""

from __future__ import annotations

import json
import os
from pathlib import Path

from helpers import wait_for
from openclaw_fixture import make_openclaw, message
from openmemd.api import MemoryIndex
from openmemd.cli import main
from openmemd.config import load_settings
from openmemd.server.agent import AgentRuntime
from openmemd.server.scheduler import JOB_DREAM, Jobs, MaintenanceScheduler


def write_transcripts(sessions: Path) -> None:
    (sessions / "a.jsonl").write_text("\n".join([
        json.dumps({"type": "session", "id": "a"}),
        message("user", "where did we park the zeppelin"),
        "{not json at all",
        message("assistant", "the zeppelin is moored at hangar nine"),
    ]) + "\n", encoding="utf-8")
    (sessions / "b.jsonl.reset.2026-01-02T03-04-05.000Z").write_text(
        message("user", "the archived walrus conversation") + "\n", encoding="utf-8")
    (sessions / "sessions.json").write_text('{"walrus": "sessions index"}', encoding="utf-8")
    (sessions / "c.jsonl.bak.2026-01-02T03-04-05.000Z").write_text(
        message("user", "backup platypus") + "\n", encoding="utf-8")
    (sessions / "narr.jsonl").write_text("\n".join([
        json.dumps({"type": "custom", "customType": "bootstrap",
                    "data": {"runId": "dreaming-narrative-2026-01-02"}}),
        message("assistant", "a dream diary about the narwhal"),
    ]) + "\n", encoding="utf-8")


def paths(index: MemoryIndex, query: str) -> dict[str, tuple[int, int]]:
    return {h.path: (h.start_line, h.end_line)
            for h in index.search(query, min_score=0.0, max_results=20, record=False)}


def test_transcripts_from_the_state_dir_are_searchable(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    write_transcripts(oc.sessions)
    outside = tmp_path / "outside.jsonl"
    outside.write_text(message("user", "the escaped ocelot") + "\n", encoding="utf-8")
    os.symlink(outside, oc.sessions / "link.jsonl")
    s = load_settings(oc.config, env=oc.env)
    with MemoryIndex.open(None, config=s) as index:
        assert index.scope.sessions_dir == oc.sessions
        index.sync()
        found = paths(index, "zeppelin")
        assert found == {"sessions/a.jsonl": (2, 4)}  # JSONL lines, the bad line skipped
        assert "sessions/b.jsonl.reset.2026-01-02T03-04-05.000Z" in paths(index, "walrus")
        assert paths(index, "platypus") == {}  # .bak. archives are not transcripts
        assert paths(index, "narwhal") == {}  # OpenClaw's dream-diary run is kept out
        assert paths(index, "ocelot") == {}  # a symlink out of the folder is never read
        assert index.status().files.on_disk == 3  # a, b.reset, narr
        # Nothing was written into OpenClaw's state dir (its index is its own).
        assert not (oc.state / "memory").exists()


def test_workspace_sessions_dir_setting(tmp_path: Path, workspace: Path) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    write_transcripts(chats)
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'workspace = "{workspace}"\nstate_dir = "{tmp_path / "st"}"\n'
                   f'sources = ["memory", "sessions"]\nsessions_dir = "{chats}"\n'
                   '[embedding]\nprovider = "none"\n', encoding="utf-8")
    with MemoryIndex.open(None, config=load_settings(cfg, env={})) as index:
        index.sync()
        assert paths(index, "zeppelin") == {"sessions/a.jsonl": (2, 4)}


def test_delta_rule_counts_bytes_and_lines(tmp_path: Path) -> None:
    from openmemd.server.session_watch import SessionDelta

    f = tmp_path / "t.jsonl"
    f.write_text("x" * 10 + "\n", encoding="utf-8")
    delta = SessionDelta(tmp_path, delta_bytes=1000, delta_messages=3)
    delta.seed()
    assert not delta.due("t.jsonl")  # unchanged
    with f.open("a", encoding="utf-8") as fh:
        fh.write("one\ntwo\n")
    assert not delta.due("t.jsonl")  # 2 lines < 3
    with f.open("a", encoding="utf-8") as fh:
        fh.write("three\n")
    assert delta.due("t.jsonl")  # 3 lines
    assert not delta.due("t.jsonl")  # counters reset
    with f.open("a", encoding="utf-8") as fh:
        fh.write("y" * 1000)
    assert delta.due("t.jsonl")  # bytes
    f.write_text("short\n", encoding="utf-8")
    assert delta.due("t.jsonl")  # truncated: at once
    assert SessionDelta(tmp_path, 0, 50).due("t.jsonl")  # 0 = any growth


def test_transcript_appended_past_the_delta_is_reindexed(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path, toml="[sync]\nwatch_debounce_ms = 50\nreconcile_minutes = 0\n")
    write_transcripts(oc.sessions)
    s = load_settings(oc.config, env=oc.env)
    agent = AgentRuntime("main", s)
    agent.open()
    agent.start()
    try:
        assert wait_for(lambda: "sessions/a.jsonl" in paths(agent.index, "zeppelin"), 30)
        watch = agent.status().sessions_watch
        assert watch is not None and watch.state.startswith("running")
        with (oc.sessions / "a.jsonl").open("a", encoding="utf-8") as fh:
            for i in range(3):  # deltaMessages is 3 in the fixture's openclaw.json
                fh.write(message("user", f"the quokka number {i}") + "\n")
        assert wait_for(lambda: "sessions/a.jsonl" in paths(agent.index, "quokka"), 30)
        assert paths(agent.index, "quokka")["sessions/a.jsonl"][1] == 7
    finally:
        agent.stop()


def test_no_sweep_scheduled_while_openclaw_dreams(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    s = load_settings(oc.config, env=oc.env)
    calls: list[str] = []
    jobs = Jobs(reconcile=lambda: None, prune=lambda: None, checkpoint=lambda: None,
                dream=lambda: calls.append("dream"))
    sched = MaintenanceScheduler(s, jobs)
    sched.start()
    try:
        assert sched.next_runs()[JOB_DREAM] is None
    finally:
        sched.shutdown()
    agent = AgentRuntime("main", s)
    agent.open()
    try:
        dreaming = agent.status().dreaming
        assert dreaming is not None and dreaming.note == "dreaming: left to OpenClaw"
    finally:
        agent.stop()
    # Without OpenClaw's dreaming the sweep is openmemd's again.
    oc.write_json("{ agents: { list: [{ id: 'main' }] } }")
    s = load_settings(oc.config, env=oc.env)
    sched = MaintenanceScheduler(s, jobs)
    sched.start()
    try:
        assert sched.next_runs()[JOB_DREAM] is not None
    finally:
        sched.shutdown()


def test_dream_command_still_runs_when_asked(tmp_path: Path, monkeypatch, capsys) -> None:
    oc = make_openclaw(tmp_path)
    for key, value in oc.env.items():
        monkeypatch.setenv(key, value)
    (oc.workspace / "memory" / "2026-01-02.md").write_text("- a note\n", encoding="utf-8")
    assert main(["dream", "--json", "--dry-run", "--config", str(oc.config)]) == 0
    assert "dryRun" in capsys.readouterr().out


def test_citations_off_on_auto(tmp_path: Path, workspace: Path, monkeypatch, capsys) -> None:
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe ferry leaves at dawn.\n")
    base = (f'workspace = "{workspace}"\nstate_dir = "{tmp_path / "st"}"\n'
            '[embedding]\nprovider = "none"\n')
    for mode in ("off", "on", "auto"):
        cfg = tmp_path / f"{mode}.toml"
        cfg.write_text(f'citations = "{mode}"\n' + base, encoding="utf-8")
        assert main(["search", "ferry", "--json", "--config", str(cfg)]) == 0
        reply = json.loads(capsys.readouterr().out)
        hit = reply["results"][0]
        assert reply["citations"] == mode
        if mode == "off":
            assert "citation" not in hit and "Source:" not in hit["snippet"]
        elif mode == "on":
            assert hit["citation"] == "MEMORY.md#L3"
            assert hit["snippet"].endswith("\n\nSource: MEMORY.md#L3")
        else:
            assert hit["citation"] == "MEMORY.md#L3" and "Source:" not in hit["snippet"]


def test_second_agent_served_with_its_own_settings(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    work_sessions = oc.state / "agents" / "work" / "sessions"
    (work_sessions / "w.jsonl").write_text(message("user", "the work yak") + "\n",
                                           encoding="utf-8")
    s = load_settings(oc.config, env=oc.env)
    agent = AgentRuntime("work", s)
    agent.open()
    try:
        assert agent.index.workspace == oc.state / "workspace-work"
        assert agent.index.scope.sessions_dir == work_sessions
        assert agent.index.settings.query.max_results == 4
        assert agent.index.db_path == tmp_path / "omstate" / "memory" / "work.sqlite"
        agent.index.sync()
        assert paths(agent.index, "yak") == {"sessions/w.jsonl": (1, 1)}
    finally:
        agent.stop()


def test_extra_path_outside_the_workspace_is_refused_aloud(tmp_path: Path) -> None:
    from openmemd.server import openclaw_side

    oc = make_openclaw(tmp_path)
    oc.write_json("{ agents: { defaults: { memorySearch: { extraPaths: ['../shared', 'in'] } } } }")
    s = load_settings(oc.config, env=oc.env)
    agent = AgentRuntime("main", s)
    agent.open()
    try:
        notes = openclaw_side.notes(s, {"main": agent})
        assert [n for n in notes if "extra path ../shared is outside the workspace" in n]
        assert not [n for n in notes if "extra path in " in n]
    finally:
        agent.stop()


def test_transcript_without_messages_does_not_break_the_sync(tmp_path: Path,
                                                              workspace: Path) -> None:
    sessions = workspace / "sessions"
    sessions.mkdir()
    # A session OpenClaw just opened: its header record and no message yet.
    (sessions / "new.jsonl").write_text(json.dumps({"type": "session", "id": "n"}) + "\n",
                                        encoding="utf-8")
    (sessions / "old.jsonl").write_text(message("user", "the patient tortoise") + "\n",
                                        encoding="utf-8")
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'workspace = "{workspace}"\nstate_dir = "{tmp_path / "st"}"\n'
                   'sources = ["memory", "sessions"]\n[embedding]\nprovider = "none"\n',
                   encoding="utf-8")
    with MemoryIndex.open(None, config=load_settings(cfg, env={})) as index:
        index.sync()
        assert paths(index, "tortoise") == {"sessions/old.jsonl": (1, 1)}
