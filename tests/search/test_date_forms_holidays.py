"""Holidays in a query (`search/date_forms_holidays.py`): a holiday said as a date (after a
preposition, "last"/"this", or with its year) is its day, without a year the latest one begun
by today; a holiday's name in a topic ("christmas presents") is no date."""

from __future__ import annotations

import datetime as dt

import pytest

from openmemd.search.dates import understand_dates

FRI = dt.date(2026, 7, 10)  # a Friday
WINTER = dt.date(2026, 2, 10)  # a Tuesday early in the year: this year's holidays not begun
D = dt.date

ROWS: list[tuple[str, dt.date, dt.date, dt.date, bool]] = [
    ("what did we do at Christmas", FRI, D(2025, 12, 25), D(2025, 12, 25), True),
    ("notes from New Year's Eve 2024", FRI, D(2024, 12, 31), D(2024, 12, 31), True),
    ("over Easter 2025", FRI, D(2025, 4, 20), D(2025, 4, 20), True),
    ("Easter '24", FRI, D(2024, 3, 31), D(2024, 3, 31), True),
    ("what did I do last Thanksgiving", FRI, D(2025, 11, 27), D(2025, 11, 27), True),
    ("what happened on Valentine's Day", WINTER, D(2025, 2, 14), D(2025, 2, 14), True),
    ("圣诞节做了什么", FRI, D(2025, 12, 25), D(2025, 12, 25), True),
    ("去年元旦", FRI, D(2025, 1, 1), D(2025, 1, 1), True),
    ("2025年国庆节", FRI, D(2025, 10, 1), D(2025, 10, 7), True),
]


@pytest.mark.parametrize(("query", "today", "first", "last", "about"), ROWS,
                         ids=[r[0] for r in ROWS])
def test_a_holiday_said_as_a_date_is_its_day(query: str, today: dt.date, first: dt.date,
                                             last: dt.date, about: bool) -> None:
    found = understand_dates(query, today)
    assert found is not None, query
    assert (found.start, found.end) == (first, last)
    assert found.about_date is about


@pytest.mark.parametrize("query", [
    "christmas presents for mum", "what are my new year's resolutions",
    "the easter egg in the app"])
def test_a_holiday_named_as_a_topic_is_no_date(query: str) -> None:
    assert understand_dates(query, FRI) is None
