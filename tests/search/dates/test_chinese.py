"""Chinese days named from today (`search/dates/chinese.py`): 去年的今天 is today's date last
year, not the whole of last year and today; 8号 alone the latest 8th, but 3号线 and 8号楼 are a
metro line and a building. (The other Chinese forms: tests/search/dates/test_query.py.)"""

from __future__ import annotations

import datetime as dt

import pytest
from date_rows import Row, each_row, resolves

from openmemd.search.dates.query import understand_dates

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

DAYS_ALONE: list[Row] = [
    ("8号聊了什么", TUESDAY, D(2023, 6, 8), D(2023, 6, 8), True),
    ("27号那天我们做了什么", TUESDAY, D(2023, 5, 27), D(2023, 5, 27), True),
    ("二十七号发生了什么", TUESDAY, D(2023, 5, 27), D(2023, 5, 27), True),
    ("我们8号开会说了什么", TUESDAY, D(2023, 6, 8), D(2023, 6, 8), False),
    ("31号？", TUESDAY, D(2023, 5, 31), D(2023, 5, 31), True),
    # with its month, the month's form reads it
    ("5月8号我们聊了什么", TUESDAY, D(2023, 5, 8), D(2023, 5, 8), True),
]


@each_row(ROWS)
def test_this_day_a_period_ago_is_one_day(
        query: str, today: dt.date, first: dt.date, last: dt.date, about: bool) -> None:
    resolves(query, today, first, last, about)


@each_row(DAYS_ALONE)
def test_a_day_of_the_month_alone_is_the_latest_one(
        query: str, today: dt.date, first: dt.date, last: dt.date, about: bool) -> None:
    resolves(query, today, first, last, about)


@pytest.mark.parametrize("query", ["坐3号线去公司", "8号楼的会议室", "第8号选手"])
def test_a_numbered_thing_is_no_day(query: str) -> None:
    assert understand_dates(query, TUESDAY) is None
