"""A recall is counted only for what a search showed as an answer, and a dry run reports what
the run after it does (issue 44, item 2)."""

from __future__ import annotations

import json
from pathlib import Path

from openmemd.api import MemoryIndex

NOTE = "memory/2026-03-02.md"
DAY = ("# 2026-03-02\n\n"
       "- Fixed the deadlock in the billing worker: the invoice job took the ledger lock "
       "before the customer lock; now both take them in the same order.\n"
       "- Set up a Grafana dashboard for queue latency.\n"
       "- Pottery class on Thursday evenings starts next week.\n"
       "- Bought a new lock for the bike, a Kryptonite U-lock.\n"
       "- Dentist appointment moved to March 14.\n")
QUERIES = ["billing worker deadlock", "how did we fix the deadlock",
           "invoice job ledger lock order", "what caused the billing deadlock"]
STORE = "memory/.dreams/short-term-recall.json"


def write_day(workspace: Path) -> None:
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    (workspace / NOTE).write_text(DAY, encoding="utf-8")


def test_a_relaxed_fallback_hit_is_not_a_recall(workspace: Path, make_settings) -> None:
    write_day(workspace)
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        shown = index.search("bike lock", min_score=0.98, explain=True)  # nothing passes
        assert shown and all(h.relaxed and h.explain and h.explain["relaxed"] for h in shown)
        index.flush_recalls()
        assert not (workspace / STORE).exists()
        assert index.search("bike lock", min_score=0.5)  # an answer: recorded
        index.flush_recalls()
    entries = json.loads((workspace / STORE).read_text("utf-8"))["entries"]
    assert entries and all(key.startswith(f"memory:{NOTE}:") for key in entries)


def test_a_dry_run_reports_what_the_run_after_it_does(workspace: Path, make_settings) -> None:
    write_day(workspace)
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        for query in QUERIES:
            index.search(query, record=True)
        # not flushed here: a dream sees every search answered before it
        dry = index.dream(dry_run=True)
        real = index.dream()
    assert dry["dryRun"] and not dry["deep"]["backupPath"]
    assert [p["key"] for p in dry["promoted"]] == [p["key"] for p in real["promoted"]] != []
    assert [round(p["score"], 4) for p in dry["promoted"]] == \
        [round(p["score"], 4) for p in real["promoted"]]
