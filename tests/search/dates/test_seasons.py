"""Seasons in a query (`search/dates/seasons.py`): three calendar months each, the
southern hemisphere's when the user's timezone lies south, "last summer" the latest one over,
and a season's name after a preposition a date only when nothing else is asked."""

from __future__ import annotations

import datetime as dt

import pytest
from date_rows import Row, each_row, resolves

from openmemd.search.dates.query import understand_dates
from openmemd.search.dates.seasons import southern

FRI = dt.date(2026, 7, 10)  # a Friday in the northern summer
WINTER = dt.date(2026, 2, 10)
D = dt.date

ROWS: list[Row] = [
    # seasons (here the northern hemisphere's: three calendar months each); "last summer" is
    # the latest one over, "this summer" the one under way, a winter runs into the next year
    ("what did we do last summer", FRI, D(2025, 6, 1), D(2025, 8, 31), True),
    ("this summer", FRI, D(2026, 6, 1), D(2026, 8, 31), True),
    ("summer 2025", FRI, D(2025, 6, 1), D(2025, 8, 31), True),
    ("the winter of 2024", FRI, D(2024, 12, 1), D(2025, 2, 28), True),
    ("notes from last fall", FRI, D(2025, 9, 1), D(2025, 11, 30), True),
    ("what happened in the spring", FRI, D(2026, 3, 1), D(2026, 5, 31), True),
    ("early summer 2025", FRI, D(2025, 6, 1), D(2025, 6, 30), True),
    ("去年夏天", FRI, D(2025, 6, 1), D(2025, 8, 31), True),
    ("今年冬天", WINTER, D(2025, 12, 1), D(2026, 2, 28), True),
]


@each_row(ROWS)
def test_a_season_resolves_to_its_months(
        query: str, today: dt.date, first: dt.date, last: dt.date, about: bool) -> None:
    resolves(query, today, first, last, about)


@pytest.mark.parametrize("query", [
    # after a preposition with something else asked: a habit, not a date; the name alone: none
    "What are Caroline's plans for the summer?", "spring boot configuration",
    "the fall of the server", "summer intern notes", "winter tires"])
def test_a_season_named_as_a_topic_is_no_date(query: str) -> None:
    assert understand_dates(query, FRI) is None


def test_the_southern_hemisphere_has_its_own_seasons() -> None:
    """Which hemisphere is the user's comes from their timezone's latitude in the tz table."""
    assert southern("Australia/Sydney") and southern("America/Sao_Paulo")
    assert not southern("Europe/London") and not southern("Asia/Shanghai")
    assert not southern(None) and not southern("Etc/UTC")
    found = understand_dates("what did we do last summer", FRI, southern=True)
    assert found is not None and (found.start, found.end) == (D(2025, 12, 1), D(2026, 2, 28))
    found = understand_dates("over the winter", FRI, southern=True)  # under way in July
    assert found is not None and (found.start, found.end) == (D(2026, 6, 1), D(2026, 8, 31))
