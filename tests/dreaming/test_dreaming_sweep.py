"""The dreaming sweep end to end on real files: promotion, gates, safety, reports, diary."""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

from openmemd.config import DeepPhaseSettings, DreamingSettings
from openmemd.dreaming import (
    RecallHit,
    last_sweep,
    record_recalls,
    run_sweep,
)
from openmemd.dreaming.explain import explain

UTC = timezone.utc
T0 = datetime(2026, 4, 6, 10, 0, tzinfo=UTC)
NOTE = "memory/2026-04-06.md"
NOTE_TEXT = """# 2026-04-06

## Infra

- The gateway router needs the VLAN 42 tag before the failover test.
- Backups go to the S3 glacier bucket every night.

Lunch with Bob at noon, talked about the garden.
"""
GATEWAY = "- The gateway router needs the VLAN 42 tag before the failover test."
# 10 recalls over 5 days by 5 different queries.
SCHEDULE = [(0, "q1"), (0, "q2"), (1, "q1"), (1, "q3"), (2, "q2"), (2, "q4"), (3, "q3"),
            (3, "q5"), (4, "q4"), (4, "q1")]


def settings(**deep: object) -> DreamingSettings:
    base = DreamingSettings(timezone="UTC")
    return dataclasses.replace(base, deep=dataclasses.replace(DeepPhaseSettings(), **deep))


def make_ws(tmp_path: Path, text: str = NOTE_TEXT) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / NOTE).write_text(text, encoding="utf-8")
    return ws


def recall_often(ws: Path, line: int = 5, snippet: str = GATEWAY, path: str = NOTE,
                 score: float = 0.72, start: datetime = T0) -> None:
    for day, query in SCHEDULE:
        record_recalls(ws, f"{query} {path}:{line}", [RecallHit(path, line, line, score, snippet)],
                       now=start + timedelta(days=day, hours=1), timezone="UTC")


def snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            out[path.relative_to(root).as_posix()] = (data, info.st_mode, info.st_mtime_ns)
    return out


SWEEP_AT = T0 + timedelta(days=4, hours=5)


def test_frequently_recalled_note_is_promoted_and_once_recalled_is_not(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    record_recalls(ws, "lunch", [RecallHit(NOTE, 8, 8, 0.9,
                                           "Lunch with Bob at noon, talked about the garden.")],
                   now=T0 + timedelta(days=4), timezone="UTC")
    result = run_sweep(ws, settings(), now=SWEEP_AT)
    assert [p.key for p in result.promoted] == [f"memory:{NOTE}:5:5"]
    promoted = result.promoted[0]
    assert promoted.score >= 0.8 and promoted.recalls == 9 and promoted.queries == 5
    assert promoted.days == 5 and set(promoted.components) == {
        "frequency", "relevance", "diversity", "recency", "consolidation", "conceptual"}
    memory = (ws / "MEMORY.md").read_text("utf-8")
    assert memory == (
        "# Long-Term Memory\n\n\n"
        "## Promoted From Short-Term Memory (2026-04-10)\n\n"
        f"<!-- openclaw-memory-promotion:memory:{NOTE}:5:5 -->\n"
        "- The gateway router needs the VLAN 42 tag before the failover test. "
        f"Source: {NOTE}#L5 "
        f"[score={promoted.score:.3f} recalls=9 avg=0.720 source={NOTE}:5-5]\n")
    assert "Lunch with Bob" not in memory
    store = json.loads((ws / "memory/.dreams/short-term-recall.json").read_text("utf-8"))
    assert store["entries"][f"memory:{NOTE}:5:5"]["promotedAt"] == "2026-04-10T15:00:00.000Z"
    assert "promotedAt" not in store["entries"][f"memory:{NOTE}:8:8"]
    json.dumps(result.to_dict())  # JSON-friendly for --json and the socket
    assert last_sweep(ws)["promoted"][0]["key"] == f"memory:{NOTE}:5:5"


def test_second_sweep_promotes_nothing_new(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    first = run_sweep(ws, settings(), now=SWEEP_AT)
    assert len(first.promoted) == 1
    memory = (ws / "MEMORY.md").read_text("utf-8")
    # More recalls of the same snippet after promotion change nothing.
    record_recalls(ws, "again", [RecallHit(NOTE, 5, 5, 0.9, GATEWAY)],
                   now=SWEEP_AT + timedelta(hours=2), timezone="UTC")
    second = run_sweep(ws, settings(), now=SWEEP_AT + timedelta(days=1))
    assert second.promoted == ()
    assert (ws / "MEMORY.md").read_text("utf-8") == memory
    assert memory.count("openclaw-memory-promotion:") == 1


def test_same_text_under_a_new_key_is_not_promoted_twice(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    run_sweep(ws, settings(), now=SWEEP_AT)
    memory = (ws / "MEMORY.md").read_text("utf-8")
    # The note was edited: the same line now lives at line 6 and is recalled there.
    (ws / NOTE).write_text(NOTE_TEXT.replace("## Infra\n", "## Infra\n\n"), encoding="utf-8")
    recall_often(ws, line=6, start=SWEEP_AT)
    result = run_sweep(ws, settings(), now=SWEEP_AT + timedelta(days=4, hours=5))
    assert result.promoted == () and result.deep.reconciled == 1
    assert (ws / "MEMORY.md").read_text("utf-8") == memory


def test_existing_markers_are_reconciled_not_duplicated(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    existing = ("# Long-Term Memory\n\n## Promoted From Short-Term Memory (2026-04-09)\n\n"
                f"<!-- openclaw-memory-promotion:memory:{NOTE}:5:5 -->\n"
                "- promoted by OpenClaw already [score=0.900 recalls=5 avg=0.700 "
                f"source={NOTE}:5-5]\n")
    (ws / "MEMORY.md").write_text(existing, encoding="utf-8")
    result = run_sweep(ws, settings(), now=SWEEP_AT)
    assert result.promoted == () and result.deep.reconciled == 1
    assert (ws / "MEMORY.md").read_text("utf-8") == existing
    store = json.loads((ws / "memory/.dreams/short-term-recall.json").read_text("utf-8"))
    assert store["entries"][f"memory:{NOTE}:5:5"]["promotedAt"] == "2026-04-10T15:00:00.000Z"


def test_moved_lines_are_rehydrated_and_deleted_ones_skipped(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    backups = "- Backups go to the S3 glacier bucket every night."
    recall_often(ws)
    recall_often(ws, line=6, snippet=backups)
    # Three lines inserted above: the gateway line moves from 5 to 8; the backups line is gone.
    edited = NOTE_TEXT.replace("## Infra\n\n", "## Infra\n\nIntro.\nMore intro.\nThird.\n", 1)
    edited = edited.replace(backups + "\n", "")
    (ws / NOTE).write_text(edited, encoding="utf-8")
    assert edited.splitlines()[7] == GATEWAY
    result = run_sweep(ws, settings(), now=SWEEP_AT)
    assert [(p.key, p.start_line, p.moved) for p in result.promoted] == [
        (f"memory:{NOTE}:5:5", 8, True)]
    memory = (ws / "MEMORY.md").read_text("utf-8")
    assert f"source={NOTE}:8-8]" in memory and "glacier" not in memory
    assert [(s.key, s.reason) for s in result.deep.skipped] == [
        (f"memory:{NOTE}:6:6", "its text is no longer in the note")]
    deep_report = (ws / "memory/dreaming/deep/2026-04-10.md").read_text("utf-8")
    assert f"- Skipped {NOTE}:6-6: its text is no longer in the note." in deep_report
    store = json.loads((ws / "memory/.dreams/short-term-recall.json").read_text("utf-8"))
    moved = store["entries"][f"memory:{NOTE}:5:5"]
    assert (moved["startLine"], moved["endLine"]) == (8, 8)
    assert "promotedAt" not in store["entries"][f"memory:{NOTE}:6:6"]


def test_size_cap_holds(tmp_path: Path) -> None:
    lines = [f"- Fact number {i}: the service {i} listens on port {8000 + i} in prod."
             for i in range(6)]
    ws = make_ws(tmp_path, "# Facts\n\n" + "\n".join(lines) + "\n")
    for i, text in enumerate(lines):
        recall_often(ws, line=3 + i, snippet=text)
    filler = "# Long-Term Memory\n\n" + "Old knowledge line.\n" * 40
    (ws / "MEMORY.md").write_text(filler, encoding="utf-8")
    cap = len(filler.encode()) + 400  # room for about two entries
    result = run_sweep(ws, settings(max_memory_bytes=cap), now=SWEEP_AT)
    size = (ws / "MEMORY.md").stat().st_size
    assert size <= cap
    assert 1 <= len(result.promoted) < 6
    assert result.deep.size_capped and result.deep.left_for_later == 6 - len(result.promoted)
    assert any("size cap" in m for m in result.messages)
    assert "size cap" in (ws / "memory/dreaming/deep/2026-04-10.md").read_text("utf-8")
    assert "size cap" in (ws / "DREAMS.md").read_text("utf-8")
    # Already over the cap: nothing more, file untouched.
    before = (ws / "MEMORY.md").read_bytes()
    again = run_sweep(ws, settings(max_memory_bytes=100), now=SWEEP_AT + timedelta(hours=1))
    assert again.promoted == () and again.deep.size_capped
    assert (ws / "MEMORY.md").read_bytes() == before


def test_limit_caps_promotions_per_run(tmp_path: Path) -> None:
    lines = [f"- Fact number {i}: the service {i} listens on port {8000 + i} in prod."
             for i in range(4)]
    ws = make_ws(tmp_path, "# Facts\n\n" + "\n".join(lines) + "\n")
    for i, text in enumerate(lines):
        recall_often(ws, line=3 + i, snippet=text)
    result = run_sweep(ws, settings(limit=2), now=SWEEP_AT)
    assert len(result.promoted) == 2 and result.deep.left_for_later == 2
    off = run_sweep(ws, settings(limit=0), now=SWEEP_AT + timedelta(hours=1))
    assert off.promoted == () and any("limit = 0" in m for m in off.messages)


def test_search_hits_on_dreaming_reports_are_never_recorded_or_promoted(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    run_sweep(ws, settings(), now=SWEEP_AT)
    report = "memory/dreaming/light/2026-04-10.md"
    lines = (ws / report).read_text("utf-8").splitlines()
    assert lines[:3] == ["# Light Sleep", "", f"- Candidate: {GATEWAY}"]
    store_path = ws / "memory/.dreams/short-term-recall.json"
    before = store_path.read_bytes()
    for day in range(5):  # a search keeps hitting the report: nothing is recorded
        n = record_recalls(ws, f"gateway {day}", [RecallHit(report, 3, 7, 0.9, "\n".join(
            lines[2:7]))], now=SWEEP_AT + timedelta(days=day), timezone="UTC")
        assert n == 0
    assert store_path.read_bytes() == before


def test_report_lines_inside_a_daily_note_are_never_promoted(tmp_path: Path) -> None:
    # OpenClaw's inline storage mode leaves report blocks inside dated notes.
    note = (NOTE_TEXT + "\n## Light Sleep\n<!-- openclaw:dreaming:light:start -->\n"
            "- Candidate: Gateway notes for the team\n  - confidence: 0.62\n"
            f"  - evidence: {NOTE}:5-5\n  - recalls: 3\n  - status: staged\n"
            "<!-- openclaw:dreaming:light:end -->\n")
    ws = make_ws(tmp_path, note)
    lines = note.splitlines()
    start = lines.index("- Candidate: Gateway notes for the team") + 1
    # (a) hits on the report lines are refused at record time
    recall_often(ws, line=start, snippet="\n".join(lines[start - 1:start + 4]))
    recall_often(ws, line=start + 1, snippet="  - confidence: 0.62")
    # (b) an entry OpenClaw recorded inside the fence (plain-looking text) is refused at
    # promotion time because its live range sits in a dreaming block
    store_path = ws / "memory/.dreams/short-term-recall.json"
    assert not store_path.exists()
    recall_often(ws, line=start, snippet="Gateway notes for the team")
    result = run_sweep(ws, settings(), now=SWEEP_AT)
    assert result.promoted == ()
    assert not (ws / "MEMORY.md").exists()
    assert [s.reason for s in result.deep.skipped] == ["its text is no longer in the note"]


def test_daily_ingestion_alone_never_promotes(tmp_path: Path) -> None:
    """#108559: dreaming reading notes to itself is not evidence that a note matters."""
    ws = make_ws(tmp_path)
    lax = settings(min_recall_count=0, min_unique_queries=0, min_score=0.0)
    for day in range(6):  # notes re-ingested night after night, edited each day
        (ws / NOTE).write_text(NOTE_TEXT + f"\nEdit {day} of the day's log.\n", "utf-8")
        os.utime(ws / NOTE, ns=(1_000_000_000 * (day + 1),) * 2)
        result = run_sweep(ws, lax, now=T0 + timedelta(days=day % 2, hours=12 + day))
        assert result.promoted == ()
    assert result.light.staged > 0  # ingestion did stage them for review
    assert not (ws / "MEMORY.md").exists()
    # An OpenClaw store with a daily-only entry that its own gates would pass.
    store_path = ws / "memory/.dreams/short-term-recall.json"
    store = json.loads(store_path.read_text("utf-8"))
    from openmemd.dreaming.recall import hash_query
    days = ["2026-04-02", "2026-04-03", "2026-04-04", "2026-04-05", "2026-04-06"]
    store["entries"]["memory:memory/2026-04-06.md:5:5"] = {
        "key": "memory:memory/2026-04-06.md:5:5", "path": NOTE, "startLine": 5, "endLine": 5,
        "source": "memory", "snippet": GATEWAY, "recallCount": 0, "dailyCount": 5,
        "groundedCount": 0, "totalScore": 4.5, "maxScore": 0.9,
        "firstRecalledAt": "2026-04-02T03:00:00.000Z",
        "lastRecalledAt": "2026-04-06T03:00:00.000Z",
        "queryHashes": [hash_query(f"__dreaming_daily__:{d}") for d in days],
        "recallDays": days, "conceptTags": ["gateway", "router", "vlan", "failover", "tag", "x"]}
    store_path.write_text(json.dumps(store, indent=2) + "\n", "utf-8")
    result = run_sweep(ws, settings(), phases=["deep"], now=T0 + timedelta(hours=20))
    assert result.promoted == ()
    [why] = [e for e in explain(ws, "memory:memory/2026-04-06.md:5:5", settings(),
                                now=T0 + timedelta(hours=20))]
    failed = {g.name for g in why.gates if not g.passed}
    assert failed == {"recalls", "distinct queries or days"}


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    (ws / "MEMORY.md").write_text("# Long-Term Memory\n\nKeep this.\n", "utf-8")
    before = snapshot(ws)
    result = run_sweep(ws, settings(), dry_run=True, now=SWEEP_AT)
    assert snapshot(ws) == before
    assert result.dry_run and [p.key for p in result.promoted] == [f"memory:{NOTE}:5:5"]
    assert result.report_paths == ("memory/dreaming/light/2026-04-10.md",
                                   "memory/dreaming/rem/2026-04-10.md",
                                   "memory/dreaming/deep/2026-04-10.md")
    assert last_sweep(ws) is None
    # Also with a corrupt store and a fresh workspace: still nothing written.
    (ws / "memory/.dreams/short-term-recall.json").write_text("not json", "utf-8")
    before = snapshot(ws)
    corrupt = run_sweep(ws, settings(), dry_run=True, now=SWEEP_AT)
    assert snapshot(ws) == before and any("unreadable" in m for m in corrupt.messages)
    empty = tmp_path / "empty"
    empty.mkdir()
    run_sweep(empty, settings(), dry_run=True, now=SWEEP_AT)
    assert list(empty.iterdir()) == []


def test_a_question_asked_on_three_days_promotes_its_answer_not_the_hits_beside_it(
        tmp_path: Path) -> None:
    # Each asking returns the answer first and two lines of the same day beside it: the
    # neighbours reach the gates' three recalls over three days too, but did not answer.
    ws = make_ws(tmp_path)
    backups = "- Backups go to the S3 glacier bucket every night."
    lunch = "Lunch with Bob at noon, talked about the garden."
    for day in range(3):
        record_recalls(ws, "which VLAN does the gateway router need", [
            RecallHit(NOTE, 5, 5, 0.8, GATEWAY), RecallHit(NOTE, 6, 6, 0.6, backups),
            RecallHit(NOTE, 8, 8, 0.5, lunch)], now=T0 + timedelta(days=day), timezone="UTC")
    result = run_sweep(ws, settings(min_score=0.0), now=T0 + timedelta(days=2, hours=12))
    assert [p.key for p in result.promoted] == [f"memory:{NOTE}:5:5"]
    memory = (ws / "MEMORY.md").read_text("utf-8")
    assert "VLAN 42" in memory and "glacier" not in memory and "Lunch" not in memory


def test_memory_md_fills_its_bootstrap_budget_not_16_kib(tmp_path: Path) -> None:
    # MEMORY.md's budget is the 20,000 characters the startup context loads; no byte cap
    # below it by default (a 16 KiB one left a fifth of the budget unused).
    ws = make_ws(tmp_path)
    user = "# Long-Term Memory\n\n" + "- A line the user wrote about the garden shed.\n" * 360
    (ws / "MEMORY.md").write_text(user, encoding="utf-8")
    assert 16 * 1024 < len(user) < 19_000
    recall_often(ws)
    result = run_sweep(ws, settings(), now=SWEEP_AT)
    assert [p.key for p in result.promoted] == [f"memory:{NOTE}:5:5"]
    memory = (ws / "MEMORY.md").read_text("utf-8")
    assert memory.startswith(user) and "VLAN 42" in memory and len(memory) <= 20_000
