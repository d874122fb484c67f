"""This day a period ago in Chinese (`search/date_forms_cn.py`): 去年的今天 is today's date last
year, not the whole of last year and today. (The other Chinese forms:
tests/search/test_dates.py.)"""

from __future__ import annotations

import datetime as dt

from date_rows import Row, each_row, resolves

TUESDAY = dt.date(2023, 6, 20)
D = dt.date

ROWS: list[Row] = [
    ("去年的今天", TUESDAY, D(2022, 6, 20), D(2022, 6, 20), True),
    ("去年今天我们聊了什么", TUESDAY, D(2022, 6, 20), D(2022, 6, 20), True),
    ("前年的今天", TUESDAY, D(2021, 6, 20), D(2021, 6, 20), True),
    ("上个月的今天", TUESDAY, D(2023, 5, 20), D(2023, 5, 20), True),
    ("上上个月的今天", TUESDAY, D(2023, 4, 20), D(2023, 4, 20), True),
    ("上周的今天", TUESDAY, D(2023, 6, 13), D(2023, 6, 13), True),
    # a day the month back does not have: its last day; a 29th of February a year back: the 28th
    ("上个月的今天", D(2024, 3, 31), D(2024, 2, 29), D(2024, 2, 29), True),
    ("去年的今天", D(2024, 2, 29), D(2023, 2, 28), D(2023, 2, 28), True),
]


@each_row(ROWS)
def test_this_day_a_period_ago_is_one_day(
        query: str, today: dt.date, first: dt.date, last: dt.date, about: bool) -> None:
    resolves(query, today, first, last, about)
