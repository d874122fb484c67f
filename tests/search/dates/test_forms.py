"""A weekday said with a day of the month (`search/dates/forms.py`): "Friday the 9th" is the
latest 9th not after today that fell on a Friday, not the latest Friday; "on the twenty-third"
a day of the month in words; "May 8th and 9th", "May 8, 9 and 10" the days first to last. (The
other English forms of that module: tests/search/dates/test_query.py.)"""

from __future__ import annotations

import datetime as dt

import pytest
from date_rows import Row, each_row, resolves

from openmemd.search.dates.query import understand_dates

SUNDAY = dt.date(2023, 7, 9)  # a Sunday, the 9th
D = dt.date

ROWS: list[Row] = [
    ("what did we talk about on Friday the 9th", SUNDAY, D(2023, 6, 9), D(2023, 6, 9), True),
    ("Friday the 9th", SUNDAY, D(2023, 6, 9), D(2023, 6, 9), True),
    ("what happened on Friday, the 9th?", SUNDAY, D(2023, 6, 9), D(2023, 6, 9), True),
    ("Fri 9th", SUNDAY, D(2023, 6, 9), D(2023, 6, 9), True),
    ("on Monday the 8th", SUNDAY, D(2023, 5, 8), D(2023, 5, 8), True),
    ("Sunday the 9th", SUNDAY, D(2023, 7, 9), D(2023, 7, 9), True),  # today
    ("Friday the 13th", SUNDAY, D(2023, 1, 13), D(2023, 1, 13), True),
    # the 31st falls on a Thursday least often: March 2022, 15 months back
    ("Thursday the 31st", SUNDAY, D(2022, 3, 31), D(2022, 3, 31), True),
    # with its month, the forms that read a whole date take it
    ("Friday the 9th of June", SUNDAY, D(2023, 6, 9), D(2023, 6, 9), True),
    ("Thurs., May 11, 2023", SUNDAY, D(2023, 5, 11), D(2023, 5, 11), True),  # not dateparser's
    # a day of the month in words, after "on"
    ("what did we decide on the twenty-third?", SUNDAY, D(2023, 6, 23), D(2023, 6, 23), False),
    # ... with no other word that might be part of a date ("decide" begins like "Dec")
    ("what did we do on the third?", SUNDAY, D(2023, 7, 3), D(2023, 7, 3), True),
    ("who called on the first", SUNDAY, D(2023, 7, 1), D(2023, 7, 1), False),
    ("notes on the twelfth", SUNDAY, D(2023, 6, 12), D(2023, 6, 12), True),
    # two days of one month: the days from the first to the second
    ("what did we discuss on May 8th and 9th", SUNDAY, D(2023, 5, 8), D(2023, 5, 9), True),
    ("the 8th or 9th of May 2023", SUNDAY, D(2023, 5, 8), D(2023, 5, 9), True),
    ("May 8 and 10, 2023", SUNDAY, D(2023, 5, 8), D(2023, 5, 10), True),
    # ... or more: the days from the first to the last
    ("notes from May 8, 9 and 10", SUNDAY, D(2023, 5, 8), D(2023, 5, 10), True),
    ("the 8th, 9th, and 10th of May 2023", SUNDAY, D(2023, 5, 8), D(2023, 5, 10), True),
    # ... but a number after "and" that counts something is no day
    ("May 8 and 10 people came", SUNDAY, D(2023, 5, 8), D(2023, 5, 8), False),
    ("May 8, 9 and 10 people came", SUNDAY, D(2023, 5, 8), D(2023, 5, 8), False),
]


@each_row(ROWS)
def test_a_weekday_with_its_day_is_the_latest_day_both_fit(
        query: str, today: dt.date, first: dt.date, last: dt.date, about: bool) -> None:
    resolves(query, today, first, last, about)


@pytest.mark.parametrize("query", [
    # a month's name after a word that only ends like "end of" or "late": a person named June
    "what did a friend of June bring", "the chocolate May baked", "what did Jon think of April"])
def test_a_month_name_after_a_word_ending_alike_is_no_date(query: str) -> None:
    assert understand_dates(query, SUNDAY) is None


@pytest.mark.parametrize("query", [
    "what did we do on the first day", "who won the first game", "we met on the second floor"])
def test_an_ordinal_counting_something_else_is_no_day(query: str) -> None:
    assert understand_dates(query, SUNDAY) is None
