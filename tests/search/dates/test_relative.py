"""Months named from today (`search/dates/relative.py`): "last March" is the latest March
before this month, "this July" this year's, "March of last year" last year's; a day said with
"last year" ("May 8 last year", "last year on May 8") is that day of last year; "two nights
ago" is a day, "the other week" one to three weeks back. The other relative forms:
tests/search/dates/test_query.py."""

from __future__ import annotations

import datetime as dt

import pytest
from date_rows import Row, each_row, resolves

from openmemd.search.dates.query import understand_dates

SPRING = dt.date(2024, 3, 1)  # a Friday in March
D = dt.date

ROWS: list[Row] = [
    ("what did we do last May", SPRING, D(2023, 5, 1), D(2023, 5, 31), True),
    ("last January", SPRING, D(2024, 1, 1), D(2024, 1, 31), True),
    ("last March", SPRING, D(2023, 3, 1), D(2023, 3, 31), True),  # not this one, under way
    ("this past July", SPRING, D(2023, 7, 1), D(2023, 7, 31), True),
    ("this February", SPRING, D(2024, 2, 1), D(2024, 2, 29), True),
    ("May of last year", SPRING, D(2023, 5, 1), D(2023, 5, 31), True),
    ("in May last year", SPRING, D(2023, 5, 1), D(2023, 5, 31), True),
    ("January this year", SPRING, D(2024, 1, 1), D(2024, 1, 31), True),
    ("May 8 last year", SPRING, D(2023, 5, 8), D(2023, 5, 8), True),
    ("8 May of last year", SPRING, D(2023, 5, 8), D(2023, 5, 8), True),
    ("last year on May 8", SPRING, D(2023, 5, 8), D(2023, 5, 8), True),  # not counted from it
    ("what did we do last year in March", SPRING, D(2023, 3, 1), D(2023, 3, 31), True),
    ("the 8th of May, last year", D(2024, 7, 1), D(2023, 5, 8), D(2023, 5, 8), True),
    ("what did we decide on May 8 last year about the database", SPRING, D(2023, 5, 8),
     D(2023, 5, 8), False),
    # nights counted as the days they end ("two nights ago": the evening of that day)
    ("what did we talk about two nights ago", SPRING, D(2024, 2, 28), D(2024, 2, 28), True),
    ("the past three nights", SPRING, D(2024, 2, 27), D(2024, 3, 1), True),
    # "the other night" as "the other day", some day of the past week; "the other week" one to
    # three weeks back
    ("who called the other night", SPRING, D(2024, 2, 23), D(2024, 2, 29), False),
    ("what did I do the other week", SPRING, D(2024, 2, 9), D(2024, 2, 23), True),
    # a weekday abbreviated: "Tues", "Thurs"; "Wed", "Sat" (words too) capitalised after "on"
    ("what did we do on Tues", SPRING, D(2024, 2, 27), D(2024, 2, 27), True),
    ("last Thurs", SPRING, D(2024, 2, 29), D(2024, 2, 29), True),
    ("what did we do on Wed", SPRING, D(2024, 2, 28), D(2024, 2, 28), True),
    ("on Sat morning", SPRING, D(2024, 2, 24), D(2024, 2, 24), True),
    # "a week ago Monday": that weekday a week before the latest one, today's if it is one
    ("a week ago Monday", SPRING, D(2024, 2, 19), D(2024, 2, 19), True),
    ("what did we do two weeks ago Friday", SPRING, D(2024, 2, 16), D(2024, 2, 16), True),
    # "exactly" or "to the day": that one day, not the week, month or year it fell in
    ("exactly one year ago", SPRING, D(2023, 3, 1), D(2023, 3, 1), True),
    ("what happened a month ago to the day", SPRING, D(2024, 2, 1), D(2024, 2, 1), True),
    # as chat writes them: "yday", "wknd", "wks", "mos", "hrs"; "back" for "ago"
    ("what did we do yday", SPRING, D(2024, 2, 29), D(2024, 2, 29), True),
    ("last wknd", SPRING, D(2024, 2, 24), D(2024, 2, 25), True),
    ("2 wks ago", SPRING, D(2024, 2, 12), D(2024, 2, 18), True),
    ("last wk", SPRING, D(2024, 2, 19), D(2024, 2, 25), True),
    ("3 mos ago", SPRING, D(2023, 12, 1), D(2023, 12, 31), True),
    ("the past 24 hrs", SPRING, D(2024, 2, 29), D(2024, 3, 1), True),
    ("a couple weeks back", SPRING, D(2024, 2, 5), D(2024, 2, 25), True),
    ("a few days back", SPRING, D(2024, 2, 26), D(2024, 2, 28), True),
    # "earlier this ...", "so far": up to today, not the days to come
    ("earlier this week", SPRING, D(2024, 2, 26), D(2024, 3, 1), True),
    ("what did we decide earlier this month about the roof", D(2024, 3, 12), D(2024, 3, 1),
     D(2024, 3, 12), False),
    ("this year so far", SPRING, D(2024, 1, 1), D(2024, 3, 1), True),
    ("the month before last", SPRING, D(2024, 1, 1), D(2024, 1, 31), True),
    ("the year before last", SPRING, D(2022, 1, 1), D(2022, 12, 31), True),
    # a day of this month or of last month
    ("on the 8th of last month", SPRING, D(2024, 2, 8), D(2024, 2, 8), True),
    ("the 1st of this month", SPRING, D(2024, 3, 1), D(2024, 3, 1), True),
    ("last month's 29th", SPRING, D(2024, 2, 29), D(2024, 2, 29), True),
]


@each_row(ROWS)
def test_a_time_named_from_today_resolves_to_its_days(
        query: str, today: dt.date, first: dt.date, last: dt.date, about: bool) -> None:
    found = resolves(query, today, first, last, about)
    assert len(found.ranges) == 1, found.ranges


@pytest.mark.parametrize("query", [
    "this may be wrong", "at last may I ask", "the last march of the season"])
def test_a_month_word_in_another_sense_is_no_date(query: str) -> None:
    assert understand_dates(query, SPRING) is None


@pytest.mark.parametrize("query", ["I sat on sun loungers", "the sun was out", "on Sun we went",
                                   "they will wed soon",
                                   "the Mos Eisley bar", "hrs of work", "come back later"])
def test_an_abbreviation_that_is_a_word_or_a_name_is_no_day(query: str) -> None:
    assert understand_dates(query, SPRING) is None
