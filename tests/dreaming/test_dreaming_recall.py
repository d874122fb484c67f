"""Recall tracking: the OpenClaw store format, filters, day buckets, locking, the recorder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from openmemd.dreaming import LockTimeoutError, RecallHit, RecallRecorder, record_recalls
from openmemd.dreaming.lockfile import store_lock
from openmemd.dreaming.recall import hash_query
from openmemd.dreaming.recall_store import StoreVersionError

UTC = timezone.utc
T0 = datetime(2026, 4, 6, 10, 0, tzinfo=UTC)
NOTE = "memory/2026-04-06.md"


def make_ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / NOTE).write_text("# Notes\n\n- The gateway router needs VLAN 42.\n", encoding="utf-8")
    return ws


def hit(path: str = NOTE, start: int = 3, end: int = 3, score: float = 0.7,
        snippet: str = "- The gateway router needs VLAN 42.", source: str = "memory") -> RecallHit:
    return RecallHit(path, start, end, score, snippet, source)


def read_store(ws: Path) -> dict:
    return json.loads((ws / "memory/.dreams/short-term-recall.json").read_text("utf-8"))


def test_store_is_written_in_openclaw_format(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    assert record_recalls(ws, "Gateway VLAN", [hit()], now=T0, timezone="UTC") == 1
    raw = (ws / "memory/.dreams/short-term-recall.json").read_text("utf-8")
    assert raw.endswith("}\n") and raw.startswith('{\n  "version": 1,')
    store = json.loads(raw)
    assert store["version"] == 1 and store["updatedAt"] == "2026-04-06T10:00:00.000Z"
    key = f"memory:{NOTE}:3:3"
    entry = store["entries"][key]
    assert list(entry) == ["key", "path", "startLine", "endLine", "source", "snippet",
                           "recallCount", "dailyCount", "groundedCount", "totalScore",
                           "maxScore", "firstRecalledAt", "lastRecalledAt", "queryHashes",
                           "recallDays", "conceptTags"]
    assert entry["key"] == key and entry["source"] == "memory"
    assert entry["snippet"] == "- The gateway router needs VLAN 42."
    assert (entry["recallCount"], entry["dailyCount"], entry["groundedCount"]) == (1, 0, 0)
    assert entry["totalScore"] == pytest.approx(0.7) and entry["maxScore"] == pytest.approx(0.7)
    assert entry["queryHashes"] == [hash_query("gateway vlan")]
    assert len(entry["queryHashes"][0]) == 12
    assert entry["recallDays"] == ["2026-04-06"]
    assert entry["conceptTags"][:3] == ["gateway", "router", "vlan"]
    assert (ws / "memory/.dreams/short-term-recall.json").stat().st_mode & 0o777 == 0o600


def test_dedupe_by_query_per_day_and_caps(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    record_recalls(ws, "q", [hit(score=0.5)], now=T0, timezone="UTC")
    record_recalls(ws, "Q ", [hit(score=0.9)], now=T0 + timedelta(hours=1), timezone="UTC")
    entry = read_store(ws)["entries"][f"memory:{NOTE}:3:3"]
    assert entry["recallCount"] == 1 and entry["totalScore"] == pytest.approx(0.5)
    assert entry["lastRecalledAt"] == "2026-04-06T11:00:00.000Z"  # refreshed anyway
    for i in range(40):  # 40 distinct queries over 20 days
        record_recalls(ws, f"query {i}", [hit()], now=T0 + timedelta(days=i // 2),
                       timezone="UTC")
    entry = read_store(ws)["entries"][f"memory:{NOTE}:3:3"]
    assert entry["recallCount"] == 41
    assert len(entry["queryHashes"]) == 32 and entry["queryHashes"][-1] == hash_query("query 39")
    assert len(entry["recallDays"]) == 16 and entry["recallDays"][-1] == "2026-04-25"


def test_only_dated_memory_notes_are_recorded(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    ignored = [
        hit(path="MEMORY.md"), hit(path="memory.md"), hit(path="memory/projects.md"),
        hit(path="memory/dreaming/light/2026-04-06.md"),
        hit(path="memory/dreaming/deep/2026-04-06.md"),
        hit(path="memory/2026-04-06-standup.md"),  # slugged: a topic file
        hit(path="sessions/2026-04-06.md", source="sessions"),
        hit(source="sessions"),
        hit(path="../outside/memory/2026-04-06.md"),
        hit(snippet="- Candidate: gateway\n  - confidence: 0.62\n  - evidence: memory/x.md:1-2"),
        hit(snippet="- confidence: 0.62"),
        hit(snippet="<!-- openclaw-memory-promotion:memory:memory/x.md:1:1 -->"),
        hit(snippet="## Heading\n- "),
    ]
    assert record_recalls(ws, "q", ignored, now=T0, timezone="UTC") == 0
    assert not (ws / "memory/.dreams").exists()  # nothing eligible: nothing written at all
    kept = [hit(path="memory/work/2026-04-05.md"), hit(path="memory/日记/2026-04-05.md"),
            hit(path="memory\\2026-04-04.md")]
    assert record_recalls(ws, "q", kept, now=T0, timezone="UTC") == 3
    assert sorted(e["path"] for e in read_store(ws)["entries"].values()) == [
        "memory/2026-04-04.md", "memory/work/2026-04-05.md", "memory/日记/2026-04-05.md"]


def test_citation_suffix_is_not_part_of_the_snippet(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    record_recalls(ws, "q", [hit(snippet="- The gateway router needs VLAN 42.\n\n"
                                         f"Source: {NOTE}#L3")], now=T0, timezone="UTC")
    entry = read_store(ws)["entries"][f"memory:{NOTE}:3:3"]
    assert entry["snippet"] == "- The gateway router needs VLAN 42."


@pytest.mark.parametrize(("tz", "day"), [("Asia/Shanghai", "2026-04-07"), ("UTC", "2026-04-06"),
                                         ("America/Los_Angeles", "2026-04-06")])
def test_day_bucket_follows_the_timezone(tmp_path: Path, tz: str, day: str) -> None:
    ws = make_ws(tmp_path)
    late = datetime(2026, 4, 6, 23, 30, tzinfo=UTC)
    record_recalls(ws, "q", [hit()], now=late, timezone=tz)
    entry = read_store(ws)["entries"][f"memory:{NOTE}:3:3"]
    assert entry["recallDays"] == [day]
    assert entry["lastRecalledAt"] == "2026-04-06T23:30:00.000Z"  # instants stay UTC


def test_events_journal_line(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    record_recalls(ws, " gateway ", [hit(), hit(path="MEMORY.md")], now=T0, timezone="UTC")
    lines = (ws / "memory/.dreams/events.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 1
    event = json.loads(lines[0])
    assert event == {"type": "memory.recall.recorded", "timestamp": "2026-04-06T10:00:00.000Z",
                     "query": "gateway", "resultCount": 1,
                     "results": [{"path": NOTE, "startLine": 3, "endLine": 3, "score": 0.7}]}


def test_openclaw_store_is_read_as_is(tmp_path: Path) -> None:
    """A store written by OpenClaw (by hand, per the spec) survives our writes unchanged."""
    ws = make_ws(tmp_path)
    (ws / "memory/.dreams").mkdir(parents=True)
    openclaw_entry = {
        "key": "memory:memory/2026-04-01.md:4:6", "path": "memory/2026-04-01.md",
        "startLine": 4, "endLine": 6, "source": "memory",
        "snippet": "Use the staging cluster for load tests.",
        "recallCount": 4, "dailyCount": 1, "groundedCount": 0, "totalScore": 3.1,
        "maxScore": 0.91, "firstRecalledAt": "2026-04-01T08:00:00.000Z",
        "lastRecalledAt": "2026-04-04T09:30:00.000Z",
        "queryHashes": ["a1b2c3d4e5f6", "0123456789ab"],
        "recallDays": ["2026-04-01", "2026-04-03", "2026-04-04"],
        "conceptTags": ["staging", "cluster", "load"],
        "promotedAt": "2026-04-05T03:00:00.000Z",
        "futureField": {"kept": True},
    }
    grounded = {
        "key": "memory:memory/2026-04-02.md:1:2:abcdef012345", "path": "memory/2026-04-02.md",
        "startLine": 1, "endLine": 2, "source": "memory", "snippet": "Alice owns billing.",
        "recallCount": 0, "dailyCount": 0, "groundedCount": 2, "totalScore": 1.6,
        "maxScore": 0.8, "firstRecalledAt": "2026-04-02T08:00:00.000Z",
        "lastRecalledAt": "2026-04-02T08:00:00.000Z", "queryHashes": ["ffffffffffff"],
        "recallDays": ["2026-04-02"], "conceptTags": ["alice", "billing"],
        "claimHash": "abcdef012345",
    }
    store = {"version": 1, "updatedAt": "2026-04-05T03:00:00.000Z",
             "entries": {openclaw_entry["key"]: openclaw_entry, grounded["key"]: grounded},
             "somethingNew": [1, 2]}
    path = ws / "memory/.dreams/short-term-recall.json"
    path.write_text(json.dumps(store, indent=2) + "\n", encoding="utf-8")
    record_recalls(ws, "q", [hit()], now=T0, timezone="UTC")
    after = read_store(ws)
    assert after["entries"][openclaw_entry["key"]] == openclaw_entry
    assert after["entries"][grounded["key"]] == grounded
    assert after["somethingNew"] == [1, 2]
    assert len(after["entries"]) == 3


def test_corrupt_store_is_moved_aside_and_rebuilt(tmp_path: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    ws = make_ws(tmp_path)
    dreams = ws / "memory/.dreams"
    dreams.mkdir(parents=True)
    (dreams / "short-term-recall.json").write_text('{"version": 1, "entries": {', "utf-8")
    with caplog.at_level("WARNING"):
        assert record_recalls(ws, "q", [hit()], now=T0, timezone="UTC") == 1
    aside = [p.name for p in dreams.iterdir() if ".corrupt-" in p.name]
    assert aside == ["short-term-recall.json.corrupt-20260406T100000Z"]
    assert (dreams / aside[0]).read_text("utf-8") == '{"version": 1, "entries": {'
    assert list(read_store(ws)["entries"]) == [f"memory:{NOTE}:3:3"]
    assert "unreadable" in caplog.text


def test_unknown_store_version_is_left_alone(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    path = ws / "memory/.dreams/short-term-recall.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 2, "entries": {}}\n', "utf-8")
    with pytest.raises(StoreVersionError):
        record_recalls(ws, "q", [hit()], now=T0, timezone="UTC")
    assert path.read_text("utf-8") == '{"version": 2, "entries": {}}\n'


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_live_lock_file_is_respected_and_stale_one_taken_over(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    lock = ws / "memory/.dreams/short-term-promotion.lock"
    lock.parent.mkdir(parents=True)
    # Another live process (here: us, as OpenClaw would look) holds a fresh lock.
    lock.write_text(f"{os.getpid()}:{int(time.time() * 1000)}\n", "utf-8")
    with pytest.raises(LockTimeoutError):
        record_recalls(ws, "q", [hit()], now=T0, timezone="UTC", lock_timeout=0.2)
    assert not (ws / "memory/.dreams/short-term-recall.json").exists()

    # Released while we wait: the write goes through.
    timer = threading.Timer(0.3, lock.unlink)
    timer.start()
    assert record_recalls(ws, "q", [hit()], now=T0, timezone="UTC", lock_timeout=5) == 1
    timer.join()

    # Old and owned by a dead process: stale, taken over at once.
    lock.write_text(f"{_dead_pid()}:{int(time.time() * 1000) - 120_000}\n", "utf-8")
    old = time.time() - 120
    os.utime(lock, (old, old))
    started = time.monotonic()
    assert record_recalls(ws, "q2", [hit()], now=T0, timezone="UTC", lock_timeout=5) == 1
    assert time.monotonic() - started < 2
    assert not lock.exists()  # we removed our own lock afterwards


def test_recorder_from_many_threads_loses_nothing(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    threads_n, per_thread = 8, 40
    recorder = RecallRecorder("UTC")
    other = RecallRecorder("UTC")  # a second writer in the same process

    def worker(n: int) -> None:
        target = recorder if n % 2 else other
        for i in range(per_thread):
            line = n * per_thread + i + 1
            target.submit(ws, f"query {n}-{i}", [hit(start=line, end=line,
                                                     snippet=f"note line {line} text")],
                          now=T0 + timedelta(minutes=i))

    def direct() -> None:  # and synchronous writers racing them
        for i in range(10):
            record_recalls(ws, f"direct {i}", [hit(start=9000 + i, end=9000 + i,
                                                   snippet=f"direct line {i} text")],
                           now=T0, timezone="UTC")

    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads_n)]
    pool.append(threading.Thread(target=direct))
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert recorder.flush(30) and other.flush(30)
    recorder.close()
    other.close()
    assert recorder.dropped == other.dropped == recorder.failed == other.failed == 0
    entries = read_store(ws)["entries"]
    assert len(entries) == threads_n * per_thread + 10
    assert sum(e["recallCount"] for e in entries.values()) == threads_n * per_thread + 10
    events = (ws / "memory/.dreams/events.jsonl").read_text("utf-8").splitlines()
    assert len(events) == threads_n * per_thread + 10
    assert not (ws / "memory/.dreams/short-term-promotion.lock").exists()


def test_recorder_never_blocks_and_drops_when_full(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    ws = make_ws(tmp_path)
    recorder = RecallRecorder("UTC", max_pending=1)
    with store_lock(ws):  # the writer thread cannot write while we hold the lock
        started = time.monotonic()
        results = []
        for i in range(3):
            results.append(recorder.submit(ws, f"q{i}", [hit()], now=T0))
            time.sleep(0.2)
        assert time.monotonic() - started < 2  # submit returned at once every time
        assert results[0] is True and results[-1] is False
    assert recorder.flush(10)
    recorder.close()
    assert not recorder.submit(ws, "late", [hit()], now=T0)  # closed
    entry = read_store(ws)["entries"][f"memory:{NOTE}:3:3"]
    assert entry["recallCount"] == results.count(True)
    assert recorder.dropped == results.count(False) + 1
    assert "dropped" in caplog.text


def test_recorder_accepts_search_result_like_objects(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)

    class Result:  # what the search API returns: same attribute names, plus more
        path, start_line, end_line, score = NOTE, 3, 3, 0.66
        snippet, source, citation = "- The gateway router needs VLAN 42.", "memory", NOTE

    with RecallRecorder("UTC") as recorder:
        assert recorder.submit(ws, "q", [Result()], now=T0)
        assert recorder.flush(10)
    assert read_store(ws)["entries"][f"memory:{NOTE}:3:3"]["maxScore"] == pytest.approx(0.66)


def test_a_search_records_its_best_hit_not_the_ones_beside_it(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    (ws / "memory/2026-04-05.md").write_text("- Lunch with Bob at noon.\n- The VLAN is 42.\n",
                                             encoding="utf-8")
    beside = hit(path="memory/2026-04-05.md", start=1, end=1, score=0.6,
                 snippet="- Lunch with Bob at noon.")
    assert record_recalls(ws, "gateway vlan", [beside, hit(score=0.8)], now=T0,
                          timezone="UTC") == 1
    assert list(read_store(ws)["entries"]) == [f"memory:{NOTE}:3:3"]
    # A tie: the search could not tell them apart, both answered.
    tie = hit(path="memory/2026-04-05.md", start=2, end=2, score=0.8, snippet="- The VLAN is 42.")
    assert record_recalls(ws, "which vlan", [tie, hit(score=0.8), beside], now=T0,
                          timezone="UTC") == 2
    # The answer came from MEMORY.md: no dated note answered, nothing is recorded.
    before = read_store(ws)
    assert record_recalls(ws, "vlan again", [hit(path="MEMORY.md", score=0.9), hit(score=0.8)],
                          now=T0, timezone="UTC") == 0
    assert read_store(ws) == before
