"""Dreaming sees Claude Code and Codex sessions: their messages are ingested by the light phase,
searches that find them are recalls, and what keeps coming back is promoted into MEMORY.md
(in process, keyword-only, fake homes from fake_homes.py: Claude Code 2.0.76 / Codex rollout
records as there)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fake_homes import PROJECT, SECRET, make_homes

import openmemd.dreaming.recall as recall_module

FACT = "quokka backoff schedule"
QUERIES = ("quokka backoff schedule", "how many times billing retries failed invoices",
           "which backoff for failed invoices")


@pytest.fixture
def homes(tmp_path: Path, make_settings, monkeypatch: pytest.MonkeyPatch):
    now = datetime.now(UTC)
    files = make_homes(tmp_path, now - timedelta(days=1), now - timedelta(days=40))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(files["home"]))
    make_settings('sources = ["memory", "claude-code", "codex"]\n[dreaming]\ntimezone = "UTC"\n')
    return files


def recall_entries(workspace: Path) -> dict[str, dict[str, object]]:
    store = workspace / "memory" / ".dreams" / "short-term-recall.json"
    return dict(json.loads(store.read_text())["entries"]) if store.exists() else {}


def search_on(cli, monkeypatch: pytest.MonkeyPatch, moment: datetime, query: str,
              *extra: str) -> list[dict[str, object]]:
    """`openmemd search` as if run at `moment` (the recall's clock)."""
    monkeypatch.setattr(recall_module, "as_utc", lambda _=None: moment)
    code, out = cli("search", query, "--json", "--min-score", "0", *extra)
    assert code == 0, out
    return list(json.loads(out)["results"])


def test_a_fact_asked_on_three_days_is_promoted_from_a_claude_code_session(
        homes, cli, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime.now(UTC)
    for back, query in zip((2, 1, 0), QUERIES, strict=True):
        hits = search_on(cli, monkeypatch, now - timedelta(days=back, hours=1), query)
        assert hits[0]["source"] == "claude-code" and FACT in str(hits[0]["snippet"])
    corpus = sorted((workspace / "memory" / ".dreams" / "session-corpus").glob("*.txt"))
    assert len(corpus) == 1  # the message's day
    text = corpus[0].read_text()
    # one line for the message that answered, tagged with its citation
    assert text.count(FACT) == 1 and "#L3] Assistant: We decided billing" in text
    (entry,) = [e for e in recall_entries(workspace).values() if FACT in str(e["snippet"])]
    assert entry["recallCount"] == 3 and len(entry["recallDays"]) == 3  # type: ignore[arg-type]

    code, out = cli("dream", "--json")
    assert code == 0, out
    promoted = json.loads(out)["promoted"]
    assert [p["path"] for p in promoted] == [corpus[0].relative_to(workspace).as_posix()]
    memory = (workspace / "MEMORY.md").read_text()
    assert FACT in memory and SECRET not in memory
    # ... and from MEMORY.md it reaches the next session's startup context
    code, out = cli("context", "--json")
    assert code == 0 and FACT in out


def test_the_light_phase_ingests_claude_code_messages_masked(homes, cli,
                                                            workspace: Path) -> None:
    code, out = cli("dream", "--phase", "light", "--json")
    assert code == 0, out
    assert json.loads(out)["light"]["ingestedSnippets"] >= 3
    day = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    corpus = (workspace / "memory" / ".dreams" / "session-corpus" / f"{day}.txt").read_text()
    assert "] Assistant: We decided billing retries" in corpus
    assert "] Subagent assistant: Subagent found the ledger uses narwhal rounding." in corpus
    assert SECRET not in corpus and "sk-liv" in corpus  # masked as search shows it
    assert "Tool call" not in corpus and "zanzibar" not in corpus
    assert "pelican" not in corpus  # the Codex session is 40 days old: out of the lookback
    report = next((workspace / "memory" / "dreaming" / "light").glob("*.md")).read_text()
    assert "Candidate: Assistant: We decided billing retries" in report
    lines = corpus.count("\n")
    code, _ = cli("dream", "--phase", "light")  # a second sweep adds nothing
    assert code == 0 and corpus.count("\n") == lines == (
        workspace / "memory" / ".dreams" / "session-corpus" / f"{day}.txt").read_text().count(
        "\n")


def test_a_project_narrowed_search_is_a_recall_too(homes, cli, workspace: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    hits = search_on(cli, monkeypatch, datetime.now(UTC), FACT, "--project", PROJECT)
    assert hits and hits[0]["source"] == "claude-code"
    assert [e["recallCount"] for e in recall_entries(workspace).values()
            if FACT in str(e["snippet"])] == [1]


def test_status_doctor_and_config_show_list_the_connected_agent(homes, cli,
                                                                tmp_path: Path) -> None:
    code, out = cli("connect", "claude-code")
    assert code == 0, out
    assert (tmp_path / "state" / "connected" / "claude-code.json").is_file()
    code, out = cli("index", "--json")
    assert code == 0, out
    claude_mtime = max(homes["claude"].stat().st_mtime, homes["subagent"].stat().st_mtime)
    last = datetime.fromtimestamp(int(claude_mtime * 1000) / 1000, UTC).isoformat(
        timespec="seconds").replace("+00:00", "Z")

    code, out = cli("status", "--json")
    (agent,) = json.loads(out)["agents"]
    rows = {r["agent"]: r for r in agent["connectedAgents"]}
    assert rows["claude-code"] == {
        "agent": "claude-code", "connected": True, "sourceEnabled": True, "sessions": 2,
        "lastRead": last, "sessionsDir": str(homes["home"] / ".claude" / "projects")}
    assert rows["codex"]["connected"] is False and rows["codex"]["sessions"] == 1
    code, out = cli("status")
    assert f"Agent claude-code: connected · 2 session file(s) indexed · last read {last}" in out
    assert "Agent codex: source on, not connected · 1 session file(s)" in out

    code, out = cli("doctor", "--json")
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert checks["agent claude-code"]["level"] == "ok"
    assert "2 session file(s) indexed" in checks["agent claude-code"]["message"]
    code, out = cli("doctor")
    assert "agent claude-code" in out and f"last read {last}" in out

    code, out = cli("config", "show", "--json")
    assert [(r["agent"], r["connected"], r["sessions"])
            for r in json.loads(out)["connectedAgents"]] == [("claude-code", True, 2),
                                                            ("codex", False, 1)]
    code, out = cli("config", "show")
    assert "Agent claude-code: connected · 2 session file(s) indexed" in out


def test_a_symlinked_corpus_is_never_written_through(homes, cli, workspace: Path,
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "memory" / ".dreams").mkdir(parents=True)
    (workspace / "memory" / ".dreams" / "session-corpus").symlink_to(outside)
    day = datetime.now(UTC).date().isoformat()
    (workspace / "memory" / f"{day}.md").write_text("- The gateway VLAN is 42 for the lab.\n")
    search_on(cli, monkeypatch, datetime.now(UTC), FACT)
    search_on(cli, monkeypatch, datetime.now(UTC), "gateway VLAN")
    code, out = cli("dream", "--phase", "light", "--json")
    assert code == 0, out
    assert list(outside.iterdir()) == []
    # the note's recall still counts
    assert [e["path"] for e in recall_entries(workspace).values()] == [f"memory/{day}.md"]
