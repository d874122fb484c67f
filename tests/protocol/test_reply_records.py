"""The reply records (protocol/replies.py): each reply's JSON, as the daemon has always sent it,
reads into its record and writes back byte for byte (same keys, same order, optional keys
absent or null as before)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmemd.config import ContextSettings
from openmemd.context import LoadedFile, StartupContext
from openmemd.dreaming.sweep_report import (
    DeepSummary,
    LightSummary,
    PromotedEntry,
    RemSummary,
    SkippedCandidate,
    SweepResult,
)
from openmemd.index.report import SyncReport
from openmemd.index.scan import ScanIssue
from openmemd.notes import AddedNote
from openmemd.protocol.records import JsonRecord
from openmemd.protocol.replies import (
    AddReply,
    ContextReply,
    DaemonPingReply,
    DreamReply,
    GetReply,
    PingReply,
    SearchReply,
    SyncReply,
    expect,
    read_reply,
)
from openmemd.protocol.requests import (
    PingRequest,
    ProtocolError,
    SearchRequest,
    StatusRequest,
)
from openmemd.protocol.status import DaemonStatus
from openmemd.search.results import NearestMiss, SearchHit


def same_bytes(kind: type[JsonRecord], data: dict[str, Any]) -> None:
    again = kind.from_json(json.loads(json.dumps(data))).to_json()
    assert json.dumps(again, ensure_ascii=False) == json.dumps(data, ensure_ascii=False)


HIT = {"path": "MEMORY.md", "startLine": 1, "endLine": 2, "score": 0.7, "snippet": "…",
       "source": "memory", "focus": {"startLine": 2, "endLine": 2},
       "citation": "MEMORY.md#L2"}
EXPLAIN = {"mode": "hybrid", "legs": ["keyword", "vector"], "vectorScore": 0.5,
           "vectorCosine": 0.81, "keywordScore": None, "bm25Rank": None, "coverage": None,
           "gateScore": 0.44, "decay": 1.0, "ageDays": None, "mmrPosition": 1,
           "relaxed": False, "keywordEvidence": None, "evidence": 0.4, "queryEvidence": 0.5,
           "score": 0.7}


@pytest.mark.parametrize("reply", [
    {"results": [HIT], "provider": "local", "model": "e5-small-multilingual", "mode": "hybrid",
     "citations": "auto", "tookMs": 16.4},
    {"results": [{**HIT, "namespace": "team/bob",
                  "explain": {**EXPLAIN, "date": {"inRange": True, "day": "2026-07-01",
                                                  "rule": "first"}}}],
     "provider": "none", "model": "fts-only", "mode": "fts-only", "citations": "auto",
     "dates": {"from": "2026-06-29", "to": "2026-07-05", "text": "last week",
               "about": "topic"}, "tookMs": 2.0, "indexing": True},
    {"results": [], "provider": "local", "model": "m", "mode": "fts-only",
     "degraded": "the provider is down", "citations": "off",
     "dates": {"from": "2026-07-03", "to": "2026-07-10", "text": "July 3rd / July 10th",
               "about": "date", "ranges": [
                   {"from": "2026-07-03", "to": "2026-07-03", "text": "July 3rd"},
                   {"from": "2026-07-10", "to": "2026-07-10", "text": "July 10th"}],
               "nearestNotes": {"before": None, "after": "memory/2026-07-11.md",
                                "searchedFirst": True}},
     "nearest": {"score": 0.28, "path": "MEMORY.md", "startLine": 3, "endLine": 3,
                 "citation": "MEMORY.md#L3"},
     "pendingVectors": 5, "tookMs": 3.5},
])
def test_a_search_reply_reads_back_as_it_was_sent(reply: dict[str, Any]) -> None:
    same_bytes(SearchReply, reply)


def test_the_search_records_write_the_replies_hits() -> None:
    from openmemd.api.searcher import reply_hit, reply_nearest

    hit = SearchHit(id="c1", path="MEMORY.md", start_line=1, end_line=2, score=0.70000012,
                    snippet="…", source="memory", citation="MEMORY.md#L2", focus_start=2,
                    focus_end=2)
    assert json.dumps(reply_hit(hit).to_json()) == json.dumps({**HIT, "score": 0.7})
    bare = SearchHit(id="c1", path="a.md", start_line=1, end_line=1, score=0.5, snippet="x",
                     source="memory", citation="")
    assert reply_hit(bare).to_json() == {"path": "a.md", "startLine": 1, "endLine": 1,
                                       "score": 0.5, "snippet": "x", "source": "memory"}
    assert reply_nearest(NearestMiss(0.2811648, "a.md", 1, 1, "a.md#L1")).to_json() == {
        "score": 0.281165, "path": "a.md", "startLine": 1, "endLine": 1,
        "citation": "a.md#L1"}


def test_pings_from_this_process_and_from_a_daemon() -> None:
    same_bytes(PingReply, {"pong": True, "version": "0.1.0", "pid": 24290})
    daemon = {"pong": True, "version": "0.1.0", "pid": 24290, "agents": {"main": {
        "workspace": "/home/me/ws", "ok": True, "index": "/state/main.sqlite"}},
        "mcp": None, "config": [2049, 1311, 1764670000000000000, 61, 1764670000000000000]}
    same_bytes(DaemonPingReply, daemon)
    # an older daemon's agent entry that is not an object reads as unknown
    odd = DaemonPingReply.from_json({**daemon, "agents": {"main": "?"}})
    assert odd.agents == {"main": None}


@pytest.mark.parametrize("reply", [
    {"path": "MEMORY.md", "text": "x", "from": 2, "lines": 1, "totalLines": 2},
    {"path": "sessions/a.jsonl", "text": "User: hi", "from": 1, "lines": 1, "totalLines": 4,
     "lineNumbers": [3]},
])
def test_a_get_reply_reads_back_as_it_was_sent(reply: dict[str, Any]) -> None:
    same_bytes(GetReply, reply)


def test_a_get_of_another_namespace_keeps_its_keys() -> None:
    stored = {"path": "a.md", "namespace": "team/bob", "totalLines": 9, "text": "x",
              "from": 2, "lines": 1}
    assert GetReply.from_json(stored).to_json() == stored  # the same keys, in the record's order


def test_add_sync_dream_and_context_replies_read_back_as_they_were_sent() -> None:
    note = AddedNote("memory/2026-11-29.md", 3, 3).to_dict()
    same_bytes(AddReply, note)  # a library add without sync
    same_bytes(AddReply, {**note, "indexed": True})
    same_bytes(AddReply, {**note, "indexed": False, "indexError": "disk full"})
    report = SyncReport(scanned=2, seconds=0.1234, skipped=[ScanIssue("a.md", "binary")])
    same_bytes(SyncReply, {"report": report.to_dict()})
    same_bytes(SyncReply, {"queued": True, "queueDepth": 0})
    sweep = SweepResult(
        "/ws", "2026-11-29", "UTC", "2026-11-29T03:00:00Z", True, ("light", "rem", "deep"),
        LightSummary(True, 2, 3, 1, "memory/dreaming/light/2026-11-29.md"),
        RemSummary(True, 3, 2, (("travel", 0.5),), ("a truth",)),
        DeepSummary(True, 2, (PromotedEntry("k", "a.md", 1, 2, "t", 0.9, {"recall": 0.5}, 0.1,
                                            3, 1, 0.8, 2, 2),),
                    skipped=(SkippedCandidate("k2", "b.md", 1, 1, 0.4, "below"),)),
        report_paths=("memory/dreaming/light/2026-11-29.md",), messages=("m",))
    same_bytes(DreamReply, {"result": sweep.to_dict()})
    ctx = StartupContext("/ws", "2026-11-29", "UTC", ("2026-11-29", "2026-11-28"),
                         ContextSettings(), (LoadedFile("MEMORY.md", "bootstrap", None, 40,
                                                        "x", 3, 0, ("bootstrapMaxChars",)),
                                             LoadedFile("memory/2026-11-29.md", "daily",
                                                        "2026-11-29", 5, "y")),
                         (("USER.md", "not readable"),))
    same_bytes(ContextReply, {"agent": "main", **ctx.to_dict()})


def test_a_client_reads_each_reply_into_its_requests_record() -> None:
    assert isinstance(read_reply(PingRequest(), {"pong": True, "version": "1", "pid": 1}),
                      DaemonPingReply)
    status = read_reply(StatusRequest(), {"running": True, "health": "healthy"})
    assert expect(status, DaemonStatus).health == "healthy"
    with pytest.raises(ProtocolError):
        expect(read_reply(SearchRequest(query="x"), {}), DaemonStatus)
