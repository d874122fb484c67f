"""Numbered weeks in a query (`search/dates/periods.py`): ISO 8601 weeks, Monday to
Sunday, of the year given or, without one, the latest such week begun by today. (Quarters,
halves and the weeks of a month are rows of tests/search/dates/test_query.py.)"""

from __future__ import annotations

import datetime as dt

import pytest
from date_rows import Row, each_row, resolves

from openmemd.search.dates.query import understand_dates

WED = dt.date(2023, 5, 10)  # a Wednesday of ISO week 19 of 2023
D = dt.date

ROWS: list[Row] = [
    ("what happened in week 19 of 2023", WED, D(2023, 5, 8), D(2023, 5, 14), True),
    ("week 19, 2023", WED, D(2023, 5, 8), D(2023, 5, 14), True),
    ("notes of 2023-W19", WED, D(2023, 5, 8), D(2023, 5, 14), True),
    ("W19 2023", WED, D(2023, 5, 8), D(2023, 5, 14), True),
    ("what did we ship in week 2", WED, D(2023, 1, 9), D(2023, 1, 15), False),
    ("calendar week 19", WED, D(2023, 5, 8), D(2023, 5, 14), True),
    # not begun by today: last year's
    ("what happened in week 30", WED, D(2022, 7, 25), D(2022, 7, 31), True),
    # week 1 holds the year's first Thursday: 2021's began on 4 January
    ("week 1 of 2021", WED, D(2021, 1, 4), D(2021, 1, 10), True),
    ("week 53 of 2020", WED, D(2020, 12, 28), D(2021, 1, 3), True),
    ("2023年第19周", WED, D(2023, 5, 8), D(2023, 5, 14), True),
    ("第19周的笔记", WED, D(2023, 5, 8), D(2023, 5, 14), True),
]


@each_row(ROWS)
def test_a_numbered_week_resolves_to_its_iso_days(
        query: str, today: dt.date, first: dt.date, last: dt.date, about: bool) -> None:
    resolves(query, today, first, last, about)


@pytest.mark.parametrize("query", [
    # a week counted from something else, an anniversary, a week number no year has
    "week 19 of the course", "in week 19 of the course", "第19周年纪念", "in week 60"])
def test_a_week_number_that_is_no_calendar_week_is_no_date(query: str) -> None:
    assert understand_dates(query, WED) is None
