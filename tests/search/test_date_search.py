"""A query naming a date, end to end through the library and the request handler: a real
SQLite index, the real default embedding model (see tests/dated_notes.py)."""

from __future__ import annotations

import json

from dated_notes import TODAY, check_date_search, write_notes
from openmemd.api import MemoryIndex
from openmemd.api.handler import LocalHandler
from openmemd.protocol.requests import SearchRequest, parse_request, to_wire

LOCAL = '[embedding]\nprovider = "local"\n'


def test_a_date_query_finds_the_day_and_a_topic_query_prefers_the_range(
        workspace, make_settings) -> None:
    write_notes(workspace)
    with MemoryIndex.open(workspace, config=make_settings(LOCAL)) as index:
        index.sync()
        check_date_search(index)


def test_the_reply_says_what_was_understood_and_today_crosses_the_wire(
        workspace, make_settings) -> None:
    write_notes(workspace)
    handler = LocalHandler(make_settings(LOCAL))
    request = SearchRequest(query="昨天的火车票", today=TODAY.replace(day=9))
    wire = to_wire(request)
    assert wire["today"] == "2026-07-09"
    again = parse_request(json.dumps({**wire, "op": "search"}).encode())
    assert again.request == request
    reply = handler(request)
    assert reply["dates"] == {"from": "2026-07-08", "to": "2026-07-08", "text": "昨天",
                              "about": "topic"}
    assert reply["results"][0]["path"] == "memory/2026-07-08.md"
    reply = handler(SearchRequest(query="train tickets"))
    assert "dates" not in reply


def _message(role: str, text: str, when: str) -> str:
    return json.dumps({"type": "message", "timestamp": when,
                       "message": {"role": role, "content": text}})


def test_transcript_messages_are_placed_by_their_timestamps(workspace, make_settings) -> None:
    """A transcript covers many days and the index keeps none of them: the messages' own
    timestamps place its chunks in a query's range (a day in the dreaming time zone)."""
    sessions = workspace / "sessions"
    sessions.mkdir()
    (sessions / "a.jsonl").write_text("\n".join([
        json.dumps({"type": "session", "id": "a"}),
        _message("user", "Can you look at the parquet export job? It times out.",
                 "2026-07-06T09:15:00Z"),
        _message("assistant", "The parquet export job now streams row groups; no timeout.",
                 "2026-07-06T09:20:00Z"),
    ]) + "\n")
    (sessions / "b.jsonl").write_text("\n".join([
        _message("user", "Plan the parquet export job for the analytics team.",
                 "2026-06-15T23:30:00Z"),  # 16 June in Lisbon (UTC+1): the zone decides
        _message("assistant", "Drafted the parquet export job plan.", "2026-06-15T23:31:00Z"),
    ]) + "\n")
    config = make_settings('sources = ["memory", "sessions"]\n' + LOCAL
                           + '[dreaming]\ntimezone = "Europe/Lisbon"\n')
    with MemoryIndex.open(workspace, config=config) as index:
        index.sync()
        hits = index.search("what did we talk about on July 6, 2026", today=TODAY,
                            explain=True)
        assert hits and hits[0].path == "sessions/a.jsonl"
        assert hits[0].explain["date"] == {"inRange": True, "day": "2026-07-06",
                                           "rule": "first"}
        assert all(h.path != "sessions/b.jsonl" or h.score <= 0.5 for h in hits)
        # a topic both transcripts name: the one written in the range comes first
        hits = index.search("the parquet export job on 16 June 2026", today=TODAY,
                            explain=True)
        assert [h.path for h in hits[:2]] == ["sessions/b.jsonl", "sessions/a.jsonl"]
        assert hits[0].explain["date"]["day"] == "2026-06-16"
        # kept out when the search is not over transcripts
        assert all(h.source == "memory" for h in index.search(
            "what did we talk about on July 6, 2026", today=TODAY, sources=["memory"],
            min_score=0))
