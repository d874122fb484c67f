"""A query naming a date, end to end through the library and the request handler: a real
SQLite index, the real default embedding model (see tests/dated_notes.py)."""

from __future__ import annotations

import json

from dated_notes import (
    TODAY,
    TRANSCRIPTS_CONFIG,
    check_date_search,
    check_transcript_dates,
    said,
    write_notes,
    write_transcripts,
)
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
    reply = handler(request).to_json()
    assert reply["dates"] == {"from": "2026-07-08", "to": "2026-07-08", "text": "昨天",
                              "about": "topic"}
    assert reply["results"][0]["path"] == "memory/2026-07-08.md"
    reply = handler(SearchRequest(query="train tickets")).to_json()
    assert "dates" not in reply



def test_transcript_messages_are_placed_by_their_timestamps(workspace, make_settings) -> None:
    write_transcripts(workspace)
    with MemoryIndex.open(workspace, config=make_settings(TRANSCRIPTS_CONFIG + LOCAL)) as index:
        index.sync()
        check_transcript_dates(index)


def test_a_date_said_without_its_year_is_the_latest_one_the_notes_are_about(
        workspace, make_settings) -> None:
    """"in May", asked in December 2026 of notes that stop in 2023: May 2023 (the latest May
    holding notes), and the reply says so; a date with its year, or counted from today, stays."""
    (workspace / "memory").mkdir(exist_ok=True)
    for day, line in (("2023-05-08", "Hiked the ridge trail with Ana."),
                      ("2023-06-01", "Started the pottery class."),
                      ("2022-05-20", "Moved into the new flat.")):
        (workspace / "memory" / f"{day}.md").write_text(f"# {day}\n\n- {line}\n", "utf-8")
    today = TODAY.replace(year=2026, month=12, day=2)
    with MemoryIndex.open(workspace, config=make_settings()) as index:  # keyword-only
        index.sync()
        found = index.searched("what did we do in May", today=today, record=False)
        assert found.hits[0].path == "memory/2023-05-08.md"
        assert said(found)["dates"]["from"] == "2023-05-01"
        assert said(found)["dates"]["to"] == "2023-05-31"
        found = index.searched("what did we do in May 2026", today=today, record=False)
        assert said(found)["dates"]["from"] == "2026-05-01"  # its year was given
        found = index.searched("what did we do yesterday", today=today, record=False)
        assert said(found)["dates"]["from"] == "2026-12-01"  # counted from today


def test_dates_that_hold_no_note_name_the_nearest_dated_notes(workspace, make_settings) -> None:
    (workspace / "memory").mkdir(exist_ok=True)
    for day, line in (("2023-05-08", "Hiked the ridge trail with Ana."),
                      ("2023-06-01", "Started the pottery class."),
                      ("2022-05-20", "Moved into the new flat.")):
        (workspace / "memory" / f"{day}.md").write_text(f"# {day}\n\n- {line}\n", "utf-8")
    (workspace / "MEMORY.md").write_text("# Memory\n\n- Likes pottery.\n", "utf-8")
    today = TODAY.replace(year=2026, month=12, day=2)
    with MemoryIndex.open(workspace, config=make_settings()) as index:  # keyword-only
        index.sync()

        def around(query: str) -> object:
            return said(index.searched(query, today=today, record=False))["dates"].get(
                "nearestNotes")

        found = index.searched("what did I do yesterday", today=today, record=False)
        assert found.hits == []
        assert around("what did I do yesterday") == {"before": "memory/2023-06-01.md",
                                                     "after": None}
        assert "nearest" not in said(found)
        assert around("notes from 1 January 2023") == {"before": "memory/2022-05-20.md",
                                                       "after": "memory/2023-05-08.md"}
        assert around("昨天") == {"before": "memory/2023-06-01.md", "after": None}
        # a day with a note holds something; a topic asked of an empty day is searched as if
        # no date were named (the pottery notes), and the reply names where the notes are
        assert around("what happened on 8 May 2023") is None
        assert around("pottery yesterday") == {"before": "memory/2023-06-01.md", "after": None}
        found = {h.path for h in index.search("pottery yesterday", today=today, record=False)}
        assert found == {"MEMORY.md", "memory/2023-06-01.md"}, found
        # a search of transcripts only has no dated note to name
        found = index.searched("yesterday", today=today, record=False, sources=["sessions"])
        assert said(found)["dates"]["nearestNotes"] == {"before": None, "after": None}


def test_a_note_told_after_the_week_it_is_about_is_still_shown_after_the_range(
        workspace, make_settings) -> None:
    """"what did I do for the animal shelter last week": last week's notes say nothing of it;
    the note written on Wednesday after ("I did a 5K for the animal shelter last weekend")
    does. The range ranks first, and that note, of another week, follows it at the default
    min_score: its own words and meaning pass, only its rank is halved by the date."""
    notes = {
        "2026-07-01": "- Planned the sprint with the platform team.\n- Lunch with Bob.\n",
        "2026-07-03": "- Fixed the flaky upload test in the CI pipeline.\n- Evening walk.\n",
        "2026-07-08": "- Quarterly planning prep with Priya: the roadmap for the billing "
                      "service, the gateway rewrite and hiring two backend engineers.\n"
                      "- The staging cluster ran out of disk again; asked Wei to resize it.\n"
                      "- Mentioned to Tom that I did a 5K for the animal shelter last "
                      "weekend.\n- Dinner at the Thai place, then an early night.\n",
    }
    (workspace / "memory").mkdir(exist_ok=True)
    for day, text in notes.items():
        (workspace / "memory" / f"{day}.md").write_text(f"# {day}\n\n{text}")
    with MemoryIndex.open(workspace, config=make_settings(LOCAL)) as index:
        index.sync()
        hits = index.search("what did I do for the animal shelter last week", today=TODAY,
                            explain=True)
        paths = [h.path for h in hits]
        assert paths[-1] == "memory/2026-07-08.md", paths
        assert set(paths[:-1]) == {"memory/2026-07-01.md", "memory/2026-07-03.md"}, paths
        assert hits[-1].explain["date"] == {"inRange": False, "day": None, "rule": "after"}


def test_a_topic_asked_of_a_day_without_notes_is_looked_for_in_the_notes_of_that_week(
        workspace, make_settings) -> None:
    """What happened on a day with no note is told in the next one ("last night I had dinner
    with my mom", written the day after) or planned in the one before: within a week, those
    notes are the range; further away, the query is searched as if it named no date."""
    notes = {
        "2023-04-20": "- Dinner with the platform team after the offsite.\n",
        "2023-05-04": "- Slept badly; the neighbours were loud.\n- Booked the car service.\n"
                      "- Last night I had dinner with my mom at the Greek place.\n"
                      "- Read two chapters of the novel.\n- Watered the plants.\n",
        "2023-05-20": "- Dinner with Ana.\n",
    }
    (workspace / "memory").mkdir(exist_ok=True)
    for day, text in notes.items():
        (workspace / "memory" / f"{day}.md").write_text(f"# {day}\n\n{text}", "utf-8")
    today = TODAY.replace(year=2026, month=12, day=2)
    with MemoryIndex.open(workspace, config=make_settings()) as index:  # keyword-only
        index.sync()
        for query in ("who did I have dinner with on May 3, 2023",
                      "who did I have dinner with on May 3rd"):  # without its year: 2023's
            found = index.searched(query, today=today, record=False)
            assert found.hits[0].path == "memory/2023-05-04.md", (query, found.hits)
            assert said(found)["dates"]["from"] == "2023-05-03"
            assert said(found)["dates"]["nearestNotes"] == {
                "before": "memory/2023-04-20.md", "after": "memory/2023-05-04.md",
                "searchedFirst": True}
        # no note within a week: searched as if no date were named (the shortest dinner note
        # ranks first by its words)
        found = index.searched("who did I have dinner with on 1 March 2023", today=today,
                               record=False)
        assert found.hits[0].path == "memory/2023-05-20.md", found.hits
        assert "searchedFirst" not in said(found)["dates"]["nearestNotes"]
