"""The dreaming sweep's files: symlinks refused, timezone, DREAMS.md diary, backups, phase
reports, single phases, explain, and workspaces it must not touch."""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from test_dreaming_sweep import (
    GATEWAY,
    NOTE,
    SWEEP_AT,
    T0,
    UTC,
    make_ws,
    recall_often,
    settings,
    snapshot,
)

from openmemd.dreaming import (
    RecallHit,
    UnsafePathError,
    record_recalls,
    run_sweep,
)
from openmemd.dreaming.explain import explain
from openmemd.errors import BadRequestError, WorkspaceError


def test_symlinked_dreams_md_is_refused(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    outside = tmp_path / "elsewhere.md"
    outside.write_text("not yours\n", "utf-8")
    (ws / "DREAMS.md").symlink_to(outside)
    before = snapshot(ws)
    with pytest.raises(UnsafePathError, match=r"DREAMS\.md"):
        run_sweep(ws, settings(), now=SWEEP_AT)
    assert snapshot(ws) == before
    assert outside.read_text("utf-8") == "not yours\n"


def test_symlinked_memory_md_and_report_dir_are_refused(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "memory/dreaming").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePathError):
        run_sweep(ws, settings(), now=SWEEP_AT)
    assert list(outside.iterdir()) == []
    (ws / "memory/dreaming").unlink()
    (ws / "MEMORY.md").symlink_to(outside / "MEMORY.md")
    with pytest.raises(UnsafePathError):
        run_sweep(ws, settings(), now=SWEEP_AT)
    assert list(outside.iterdir()) == []


def test_timezone_sets_section_day_and_report_names(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    late = datetime(2026, 4, 10, 23, 30, tzinfo=UTC)
    tz_settings = dataclasses.replace(settings(), timezone="Asia/Shanghai")
    result = run_sweep(ws, tz_settings, now=late)
    assert result.day == "2026-04-11" and result.timezone == "Asia/Shanghai"
    assert "## Promoted From Short-Term Memory (2026-04-11)" in (ws / "MEMORY.md").read_text()
    assert (ws / "memory/dreaming/deep/2026-04-11.md").is_file()
    assert "*April 11, 2026 at 7:30 AM GMT+8*" in (ws / "DREAMS.md").read_text("utf-8")


def test_dreams_md_diary_format_and_mode(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    run_sweep(ws, settings(), now=SWEEP_AT)
    text = (ws / "DREAMS.md").read_text("utf-8")
    assert text.startswith("# Dream Diary\n\n<!-- openclaw:dreaming:diary:start -->\n---\n\n"
                           "*April 10, 2026 at 3:00 PM UTC*\n\n")
    assert text.endswith("\n<!-- openclaw:dreaming:diary:end -->\n")
    assert "promoted 1 into MEMORY.md" in text and "score 0." in text
    assert "frequency" in text and "phase boost" in text
    assert (ws / "DREAMS.md").stat().st_mode & 0o777 == 0o600
    os.chmod(ws / "DREAMS.md", 0o640)
    run_sweep(ws, settings(), now=SWEEP_AT + timedelta(days=1))
    text = (ws / "DREAMS.md").read_text("utf-8")
    assert text.count("<!-- openclaw:dreaming:diary:end -->") == 1
    assert text.count("\n---\n") == 2
    assert text.index("April 10") < text.index("April 11") < text.index("diary:end")
    assert (ws / "DREAMS.md").stat().st_mode & 0o777 == 0o640


def test_existing_diary_content_is_kept(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    existing = ("# Dream Diary\n\n<!-- openclaw:dreaming:diary:start -->\n---\n\n"
                "*April 1, 2026 at 3:00 AM PDT*\n\nAn OpenClaw dream.\n\n"
                "<!-- openclaw:dreaming:diary:end -->\n\n## Deep Sleep\nkept\n")
    (ws / "DREAMS.md").write_text(existing, "utf-8")
    run_sweep(ws, settings(), now=SWEEP_AT)
    text = (ws / "DREAMS.md").read_text("utf-8")
    assert text.startswith(existing.split("<!-- openclaw:dreaming:diary:end -->")[0])
    assert text.endswith("<!-- openclaw:dreaming:diary:end -->\n\n## Deep Sleep\nkept\n")


def test_backups_are_kept_outside_the_index(tmp_path: Path) -> None:
    lines = [f"- Fact number {i}: the service {i} listens on port {8000 + i} in prod."
             for i in range(3)]
    ws = make_ws(tmp_path, "# Facts\n\n" + "\n".join(lines) + "\n")
    (ws / "MEMORY.md").write_text("# Long-Term Memory\n\nOriginal.\n", "utf-8")
    versions = []
    for i, text in enumerate(lines):
        recall_often(ws, line=3 + i, snippet=text, start=T0 + timedelta(days=10 * i))
        versions.append((ws / "MEMORY.md").read_bytes())
        result = run_sweep(ws, settings(backups=2),
                           now=T0 + timedelta(days=10 * i + 4, hours=5))
        assert len(result.promoted) == 1 and result.deep.backup_path
    backups = sorted((ws / "memory/.dreams/backups").iterdir())
    assert len(backups) == 2
    assert all(not p.name.endswith(".md") for p in backups)
    assert [p.read_bytes() for p in backups] == versions[1:]


def test_phase_reports_and_checkpoint(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    now = T0 + timedelta(hours=8)  # the note is today's: light ingests it
    result = run_sweep(ws, settings(), now=now)
    assert result.light.ingested_files == 1 and result.light.ingested_snippets == 2
    light_report = (ws / "memory/dreaming/light/2026-04-06.md").read_text("utf-8")
    assert light_report.startswith("# Light Sleep\n\n- Candidate: Infra: The gateway router")
    assert "  - confidence: 0.62\n  - evidence: memory/2026-04-06.md:5-6\n  - recalls: 0\n" \
           "  - status: staged\n" in light_report
    rem_report = (ws / "memory/dreaming/rem/2026-04-06.md").read_text("utf-8")
    assert rem_report.startswith("# REM Sleep\n\n### Reflections\n")
    assert "\n\n### Possible Lasting Truths\n" in rem_report
    assert (ws / "memory/dreaming/deep/2026-04-06.md").read_text("utf-8") == (
        "# Deep Sleep\n\n- Ranked 0 candidate(s) for durable promotion.\n"
        "- Promoted 0 candidate(s) into MEMORY.md.\n")
    checkpoint = json.loads((ws / "memory/.dreams/daily-ingestion.json").read_text("utf-8"))
    info = (ws / NOTE).stat()
    assert checkpoint == {"version": 1, "files": {NOTE: {"mtimeMs": info.st_mtime_ns // 10**6,
                                                        "size": info.st_size}}}
    signals = json.loads((ws / "memory/.dreams/phase-signals.json").read_text("utf-8"))
    assert signals["version"] == 1 and all(
        e["lightHits"] >= 1 for e in signals["entries"].values())
    again = run_sweep(ws, settings(), now=now + timedelta(hours=1))
    assert again.light.ingested_files == 0  # unchanged note skipped
    events = [json.loads(x)["type"] for x in
              (ws / "memory/.dreams/events.jsonl").read_text("utf-8").splitlines()]
    assert events.count("memory.dream.completed") == 6
    assert "memory.recall.recorded" in events


def test_phases_can_run_alone(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    result = run_sweep(ws, settings(), phases=["deep"], now=SWEEP_AT)
    assert result.phases == ("deep",) and len(result.promoted) == 1
    assert not (ws / "memory/dreaming/light").exists()
    disabled = dataclasses.replace(settings(), light=dataclasses.replace(
        settings().light, enabled=False))
    result = run_sweep(ws, disabled, phases=["light"], now=SWEEP_AT)
    assert result.phases == () and any("disabled" in m for m in result.messages)
    with pytest.raises(BadRequestError, match="unknown dreaming phase"):
        run_sweep(ws, settings(), phases=["nap"], now=SWEEP_AT)
    assert run_sweep(ws, settings(), phases="all", dry_run=True, now=SWEEP_AT).phases == (
        "light", "rem", "deep")
    assert run_sweep(ws, settings(), phases="rem", dry_run=True, now=SWEEP_AT).phases == (
        "rem",)


def test_explain_reports_signals_and_every_gate(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    record_recalls(ws, "lunch", [RecallHit(NOTE, 8, 8, 0.9,
                                           "Lunch with Bob at noon, talked about the garden.")],
                   now=T0, timezone="UTC")
    by_text = explain(ws, "garden", settings(), now=SWEEP_AT)
    assert [e.key for e in by_text] == [f"memory:{NOTE}:8:8"]
    once = by_text[0]
    assert not once.eligible
    assert {g.name for g in once.gates if not g.passed} == {
        "recalls", "distinct queries or days", "score"}
    text = once.format_text()
    assert "[FAIL] recalls: 1 organic" in text and "[pass] age" in text
    json.dumps(once.to_dict())
    by_key = explain(ws, f"memory:{NOTE}:5:5", settings(), now=SWEEP_AT)
    assert len(by_key) == 1 and by_key[0].eligible and by_key[0].score >= 0.8
    assert by_key[0].signals["recallCount"] == 9
    assert len(explain(ws, "2026-04-06", settings(), now=SWEEP_AT)) == 2
    assert not (ws / "MEMORY.md").exists()  # explain writes nothing


def test_unreadable_memory_md_is_never_rewritten(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    raw = b"# Long-Term Memory\n\nLatin-1 caf\xe9 notes.\n"
    (ws / "MEMORY.md").write_bytes(raw)
    result = run_sweep(ws, settings(), now=SWEEP_AT)
    assert result.promoted == () and any("not a readable UTF-8" in m for m in result.messages)
    assert (ws / "MEMORY.md").read_bytes() == raw


def test_entry_recorded_by_openclaw_is_promoted_with_its_key(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    key = f"memory:{NOTE}:5:5"
    store = {"version": 1, "updatedAt": "2026-04-09T20:00:00.000Z", "entries": {key: {
        "key": key, "path": NOTE, "startLine": 5, "endLine": 5, "source": "memory",
        "snippet": GATEWAY, "recallCount": 6, "dailyCount": 0, "groundedCount": 0,
        "totalScore": 5.1, "maxScore": 0.9, "firstRecalledAt": "2026-04-05T08:00:00.000Z",
        "lastRecalledAt": "2026-04-09T20:00:00.000Z",
        "queryHashes": ["a1b2c3d4e5f6", "0123456789ab", "abcdefabcdef", "111111111111"],
        "recallDays": ["2026-04-05", "2026-04-07", "2026-04-09"],
        "conceptTags": ["gateway", "router", "vlan", "failover"]}}}
    path = ws / "memory/.dreams/short-term-recall.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(store, indent=2) + "\n", "utf-8")
    result = run_sweep(ws, settings(), phases=["deep"], now=SWEEP_AT)
    assert [p.key for p in result.promoted] == [key]
    assert f"<!-- openclaw-memory-promotion:{key} -->" in (ws / "MEMORY.md").read_text("utf-8")
    saved = json.loads(path.read_text("utf-8"))["entries"][key]
    assert saved["promotedAt"] == "2026-04-10T15:00:00.000Z" and saved["recallCount"] == 6


def test_missing_workspace_is_an_error_not_created(tmp_path: Path) -> None:

    missing = tmp_path / "nope"
    with pytest.raises(WorkspaceError):
        record_recalls(missing, "q", [RecallHit(NOTE, 1, 1, 0.5, "some text here")], now=T0)
    with pytest.raises(WorkspaceError):
        run_sweep(missing, settings(), now=T0)
    assert not missing.exists()
