"""Holidays in a query (`search/dates/holidays.py`): a holiday said as a date (after a
preposition, "last"/"this", or with its year) is its day, without a year the latest one begun
by today, "Labor Day weekend" its long weekend; a holiday's name in a topic ("christmas
presents") is no date."""

from __future__ import annotations

import datetime as dt

import pytest
from date_rows import Row, each_row, resolves

from openmemd.search.dates.query import understand_dates

FRI = dt.date(2026, 7, 10)  # a Friday
WINTER = dt.date(2026, 2, 10)  # a Tuesday early in the year: this year's holidays not begun
D = dt.date

ROWS: list[Row] = [
    ("what did we do at Christmas", FRI, D(2025, 12, 25), D(2025, 12, 25), True),
    ("notes from New Year's Eve 2024", FRI, D(2024, 12, 31), D(2024, 12, 31), True),
    ("over Easter 2025", FRI, D(2025, 4, 20), D(2025, 4, 20), True),
    # a holiday's weekend: its day and the Saturday and Sunday beside it (not this weekend)
    ("Labor Day weekend", FRI, D(2025, 8, 30), D(2025, 9, 1), True),
    ("what did we do over Memorial Day weekend", FRI, D(2026, 5, 23), D(2026, 5, 25), True),
    ("Thanksgiving weekend 2025", FRI, D(2025, 11, 27), D(2025, 11, 30), True),
    ("Easter '24", FRI, D(2024, 3, 31), D(2024, 3, 31), True),
    ("what did I do last Thanksgiving", FRI, D(2025, 11, 27), D(2025, 11, 27), True),
    ("what happened on Valentine's Day", WINTER, D(2025, 2, 14), D(2025, 2, 14), True),
    ("圣诞节做了什么", FRI, D(2025, 12, 25), D(2025, 12, 25), True),
    ("去年元旦", FRI, D(2025, 1, 1), D(2025, 1, 1), True),
    ("2025年国庆节", FRI, D(2025, 10, 1), D(2025, 10, 7), True),
    # the United States' days counted by weekday
    ("what happened on Mother's Day 2023", FRI, D(2023, 5, 14), D(2023, 5, 14), True),
    ("last Father's Day", FRI, D(2026, 6, 21), D(2026, 6, 21), True),
    ("on Memorial Day 2023", FRI, D(2023, 5, 29), D(2023, 5, 29), True),
    ("Labor Day 2023", FRI, D(2023, 9, 4), D(2023, 9, 4), True),
    ("Independence Day 2023", FRI, D(2023, 7, 4), D(2023, 7, 4), True),
    ("Christmas in 2023", FRI, D(2023, 12, 25), D(2023, 12, 25), True),
    # the lunar calendar's: 春节 is its holiday week, the rest a day
    ("2023年中秋节", FRI, D(2023, 9, 29), D(2023, 9, 29), True),
    ("2023年春节聊了什么", FRI, D(2023, 1, 22), D(2023, 1, 28), True),
    ("去年除夕", FRI, D(2025, 1, 28), D(2025, 1, 28), True),
    ("农历新年聊了什么", FRI, D(2026, 2, 17), D(2026, 2, 23), True),  # 春节 by another name
    ("大年三十", FRI, D(2026, 2, 16), D(2026, 2, 16), True),  # 除夕
    ("去年大年初一", FRI, D(2025, 1, 29), D(2025, 1, 29), True),
    ("2024年端午节", FRI, D(2024, 6, 10), D(2024, 6, 10), True),
    ("七夕", FRI, D(2025, 8, 29), D(2025, 8, 29), True),  # this year's is still to come
    ("2024年清明节", FRI, D(2024, 4, 4), D(2024, 4, 4), True),  # a solar term
    ("去年冬至", FRI, D(2025, 12, 21), D(2025, 12, 21), True),
    ("2023年五一假期", FRI, D(2023, 5, 1), D(2023, 5, 5), True),  # the holiday week
    ("over Chinese New Year 2023", FRI, D(2023, 1, 22), D(2023, 1, 22), True),
    ("during the Mid-Autumn Festival 2023", FRI, D(2023, 9, 29), D(2023, 9, 29), True),
    ("2023年的中秋节", FRI, D(2023, 9, 29), D(2023, 9, 29), True),
    ("去年的春节", FRI, D(2025, 1, 29), D(2025, 2, 4), True),
    # a holiday of "last year" is that year's own, not this year's day moved back a year
    ("last year on Mother's Day", FRI, D(2025, 5, 11), D(2025, 5, 11), True),
    ("what did Tim do for Thanksgiving last year", FRI, D(2025, 11, 27), D(2025, 11, 27), False),
    ("last year's Thanksgiving", FRI, D(2025, 11, 27), D(2025, 11, 27), True),
    ("Easter of last year", FRI, D(2025, 4, 20), D(2025, 4, 20), True),
    ("Easter in the year 2023", FRI, D(2023, 4, 9), D(2023, 4, 9), True),
]


@each_row(ROWS)
def test_a_holiday_said_as_a_date_is_its_day(
        query: str, today: dt.date, first: dt.date, last: dt.date, about: bool) -> None:
    resolves(query, today, first, last, about)


@pytest.mark.parametrize("query", [
    "christmas presents for mum", "what are my new year's resolutions",
    "the easter egg in the app", "the labor market report", "a memorial service", "五一路的店"])
def test_a_holiday_named_as_a_topic_is_no_date(query: str) -> None:
    assert understand_dates(query, FRI) is None
