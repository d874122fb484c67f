"""A small workspace of dated notes and what a search naming dates must find in it, on any
backend (tests/search/test_date_search.py on SQLite, tests/store/postgres/ on PostgreSQL),
through the library API with the real default embedding model."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from openmemd.api import MemoryIndex

TODAY = dt.date(2026, 7, 10)  # a Friday: "last week" is Monday June 29th .. Sunday July 5th
NOTES = {
    "memory/2026-07-03.md": "# 2026-07-03\n\n- Went hiking at Mount Tam with Alice in the "
                            "morning.\n- Fixed the flaky upload test in the CI pipeline.\n",
    "memory/2026-07-01.md": "# 2026-07-01\n\n- Decided to move the database from SQLite to "
                            "PostgreSQL for the shared deployment.\n- Lunch with Bob.\n",
    "memory/2026-05-12.md": "# 2026-05-12\n\n- Discussed the database schema: we decided to keep "
                            "SQLite for now and revisit later.\n",
    "memory/2026-06-20.md": "# 2026-06-20\n\n- Read a book about gardening. Planted tomatoes.\n",
    "memory/2026-07-08.md": "# 2026-07-08\n\n- Booked train tickets to Lisbon for August.\n",
    "MEMORY.md": "# Long-term memory\n\n- The user prefers TypeScript for new projects.\n\n"
                 "## 2026-06-30 decisions\n\n- Chose Redis for the background job queue.\n"
                 "- Moved the nightly backups to the office NAS.\n",
}


def write_notes(workspace: Path) -> None:
    for rel, text in NOTES.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text, encoding="utf-8")


def said(found: Any) -> dict[str, Any]:
    """What a search's reply says besides its hits, as JSON."""
    return {k: v for k, v in found.reply(0.0).to_json().items() if k != "results"}


def explain_of(hits: list[Any], path: str) -> dict[str, Any]:
    return next(h.explain for h in hits if h.path == path)


def check_date_search(index: MemoryIndex) -> None:
    """What a person asking by date gets (see the asserts)."""
    # About the day itself: that day's note first, whatever else matches "what did I do".
    for query in ("what did I do on July 3rd", "notes from 3 July 2026", "7月3号我做了什么",
                  "what happened seven days ago", "show me last Friday",
                  "what did I do a week ago today"):
        hits = index.search(query, today=TODAY)
        assert hits and hits[0].path == "memory/2026-07-03.md", (query, [h.path for h in hits])
    found = index.searched("what did I do on July 3rd", today=TODAY)
    assert said(found)["dates"] == {"from": "2026-07-03", "to": "2026-07-03",
                                            "text": "July 3rd", "about": "date"}
    found = index.searched("notes from the end of last month", today=TODAY)  # the part asked
    assert said(found)["dates"] == {"from": "2026-06-21", "to": "2026-06-30",
                                            "text": "the end of last month", "about": "date"}
    # A topic in a range: the range's note on the topic passes the older one on it. Naming
    # the whole topic ("decided", "database"), it is what was asked for: first, the rest after.
    found = index.searched("what did we decide about the database", min_score=0.0)
    plain = found.hits
    assert "dates" not in said(found)
    assert plain[0].path == "memory/2026-05-12.md"  # without the date, the older note leads
    found = index.searched("what did we decide about the database last week", min_score=0.0,
                           explain=True, today=TODAY)
    hits = found.hits
    paths = [h.path for h in hits]
    assert paths[0] == "memory/2026-07-01.md" and "memory/2026-05-12.md" in paths, paths
    assert explain_of(hits, "memory/2026-07-01.md")["date"] == {
        "inRange": True, "day": "2026-07-01", "rule": "first"}
    assert explain_of(hits, "memory/2026-05-12.md")["date"]["rule"] == "after"
    assert said(found)["dates"] == {"from": "2026-06-29", "to": "2026-07-05",
                                    "text": "last week", "about": "topic"}
    # Ranked after the range, a note of another time is still shown when its own words and
    # meaning pass min_score: the question's date may not be its note's (told days later).
    shown = [h.path for h in index.search("what did we decide about the database last week",
                                          today=TODAY)]
    assert shown[0] == "memory/2026-07-01.md" and "memory/2026-05-12.md" in shown, shown
    # Naming more than the note holds ("migration"), the range's notes still come first (the
    # question is about last week), by how well they answer the rest; the older note, which
    # leads without the date, follows them (its score halved).
    query = "what did we decide about the database migration"
    assert index.search(query, min_score=0.0)[0].path == "memory/2026-05-12.md"
    hits = index.search(query + " last week", min_score=0.0, explain=True, today=TODAY)
    assert hits[0].path == "memory/2026-07-01.md", [h.path for h in hits]
    assert explain_of(hits, "memory/2026-07-01.md")["date"]["rule"] == "range"
    assert explain_of(hits, "memory/2026-05-12.md")["date"] == {
        "inRange": False, "day": None, "rule": "after"}
    # A topic asked of a time no note is from is searched as if no date were named (the date
    # cannot narrow it; its words may be what a note says), the reply naming the nearest notes.
    found = index.searched("what did we decide about the database in summer 2024",
                           min_score=0.0, today=TODAY)
    hits = found.hits
    assert hits and hits[0].path == "memory/2026-05-12.md", [h.path for h in hits]
    meta = said(found)["dates"]
    assert (meta["from"], meta["about"]) == ("2024-06-01", "topic")
    assert meta["nearestNotes"] == {"before": None, "after": "memory/2026-05-12.md"}
    # ... but a question the notes show no evidence for is not answered by the date alone.
    assert index.search("what did the dentist say about my teeth last week", today=TODAY) == []
    # A dated heading inside MEMORY.md counts as the range too.
    hits = index.search("which job queue did we choose last week", min_score=0.0,
                        explain=True, today=TODAY)
    assert explain_of(hits, "MEMORY.md")["date"]["day"] == "2026-06-30"
    # ... and so does a later fact of that section, cut apart from the heading (MEMORY.md is
    # indexed fact by fact)
    hits = index.search("where did the nightly backups go last week", min_score=0.0,
                        explain=True, today=TODAY)
    backups = next(h for h in hits if h.path == "MEMORY.md" and "backups" in h.snippet)
    assert backups.explain["date"]["day"] == "2026-06-30" and hits[0] is backups
    # A day without a note: nothing is made up for it at the default threshold.
    assert index.search("what did I do on June 2nd", today=TODAY) == []


# Transcripts covering several days; the messages' own timestamps say which (the index keeps
# none of them), read in the dreaming time zone.
TRANSCRIPTS_CONFIG = 'sources = ["memory", "sessions"]\n[dreaming]\ntimezone = "Europe/Lisbon"\n'


def _message(role: str, text: str, when: str) -> str:
    return json.dumps({"type": "message", "timestamp": when,
                       "message": {"role": role, "content": text}})


def write_transcripts(workspace: Path) -> None:
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


def check_transcript_dates(index: MemoryIndex) -> None:
    """A transcript's chunks are of the days their messages were written."""
    hits = index.search("what did we talk about on July 6, 2026", today=TODAY, explain=True)
    assert hits and hits[0].path == "sessions/a.jsonl"
    assert hits[0].explain["date"] == {"inRange": True, "day": "2026-07-06", "rule": "first"}
    assert all(h.path != "sessions/b.jsonl" or h.score <= 0.5 for h in hits)
    # a topic both transcripts name: the one written in the range comes first
    hits = index.search("the parquet export job on 16 June 2026", today=TODAY, explain=True)
    assert [h.path for h in hits[:2]] == ["sessions/b.jsonl", "sessions/a.jsonl"]
    assert hits[0].explain["date"]["day"] == "2026-06-16"
    # kept out when the search is not over transcripts
    assert all(h.source == "memory" for h in index.search(
        "what did we talk about on July 6, 2026", today=TODAY, sources=["memory"],
        min_score=0))
