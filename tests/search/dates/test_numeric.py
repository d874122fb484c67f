"""Dates in digits with their weekday (`search/dates/numeric.py`): "Monday 5/8" is, of its
two readings (May 8th, August 5th), the latest day not after today that fell on a Monday. (ISO,
3/27/2023 and "on 3/27" are rows of tests/search/dates/test_query.py.)"""

from __future__ import annotations

import datetime as dt

from date_rows import Row, each_row, resolves

SUNDAY = dt.date(2023, 7, 9)
D = dt.date

ROWS: list[Row] = [
    ("what happened Monday (5/8)", SUNDAY, D(2023, 5, 8), D(2023, 5, 8), True),
    ("on Monday, 5/8", SUNDAY, D(2023, 5, 8), D(2023, 5, 8), True),
    ("Monday 8/5", SUNDAY, D(2023, 5, 8), D(2023, 5, 8), True),  # 8 May: 5 August was a Friday
    ("Tuesday 5/8", SUNDAY, D(2018, 5, 8), D(2018, 5, 8), True),  # the last May 8th a Tuesday
    ("Mon 8/5/2023", SUNDAY, D(2023, 5, 8), D(2023, 5, 8), True),  # with its year too
    # both readings fell on a Saturday: a.b.yyyy is day first, as for "Saturday 1.7.2023"
    ("Sat 1.7.2023", SUNDAY, D(2023, 7, 1), D(2023, 7, 1), True),
    ("Saturday 1.7.2023", SUNDAY, D(2023, 7, 1), D(2023, 7, 1), True),
]


@each_row(ROWS)
def test_a_weekday_picks_the_reading_of_a_date_in_digits(
        query: str, today: dt.date, first: dt.date, last: dt.date, about: bool) -> None:
    resolves(query, today, first, last, about)
