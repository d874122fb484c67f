"""How a query's date phrases combine (`search/dates/spans.py`): a range runs forward from its
start ("Monday to Wednesday" on a Wednesday is this week's, "from October to March" in May is
last October to this March), months and years said as a range, and "so far" / 至今 / 以来 end
today, not at the end of the period. The other forms: tests/search/dates/test_query.py."""

from __future__ import annotations

import datetime as dt

from date_rows import Row, each_row, resolves

from openmemd.search.dates.query import understand_dates

WEDNESDAY = dt.date(2023, 5, 10)
TUESDAY = dt.date(2023, 5, 9)
D = dt.date

ROWS: list[Row] = [
    # each weekday alone is the latest before today: Monday the 8th, Wednesday the 3rd
    ("what did we do Monday to Wednesday", WEDNESDAY, D(2023, 5, 8), D(2023, 5, 10), True),
    ("between Monday and Wednesday", WEDNESDAY, D(2023, 5, 8), D(2023, 5, 10), True),
    ("from last Monday through Wednesday", WEDNESDAY, D(2023, 5, 8), D(2023, 5, 10), True),
    ("周一到周三", WEDNESDAY, D(2023, 5, 8), D(2023, 5, 10), True),
    # the Wednesday after Monday the 8th is still to come: the week before
    ("Monday to Wednesday", TUESDAY, D(2023, 5, 1), D(2023, 5, 3), True),
    ("Friday to Monday", WEDNESDAY, D(2023, 5, 5), D(2023, 5, 8), True),
    ("Tuesday to Thursday", WEDNESDAY, D(2023, 5, 2), D(2023, 5, 4), True),
    # months and years as a range
    ("from October to March", WEDNESDAY, D(2022, 10, 1), D(2023, 3, 31), True),
    ("what did we plant between March and April", WEDNESDAY, D(2023, 3, 1), D(2023, 4, 30),
     False),
    ("from December to March 2023", WEDNESDAY, D(2022, 12, 1), D(2023, 3, 31), True),
    ("from 2021 to 2023", WEDNESDAY, D(2021, 1, 1), D(2023, 12, 31), True),
    ("between 2021 and 2023", WEDNESDAY, D(2021, 1, 1), D(2023, 12, 31), True),
    ("notes from March", WEDNESDAY, D(2023, 3, 1), D(2023, 3, 31), True),
    ("from May 1 to May 8", WEDNESDAY, D(2023, 5, 1), D(2023, 5, 8), True),
    ("from March 3 to March 10", WEDNESDAY, D(2023, 3, 3), D(2023, 3, 10), True),
    # up to today
    ("本月至今", WEDNESDAY, D(2023, 5, 1), D(2023, 5, 10), True),
    ("今年以来", WEDNESDAY, D(2023, 1, 1), D(2023, 5, 10), True),
    ("这周到目前为止", WEDNESDAY, D(2023, 5, 8), D(2023, 5, 10), True),
    ("since March", WEDNESDAY, D(2023, 3, 1), D(2023, 5, 10), True),
]


@each_row(ROWS)
def test_date_phrases_combine(query: str, today: dt.date, first: dt.date, last: dt.date,
                              about: bool) -> None:
    resolves(query, today, first, last, about)


def test_a_year_range_said_backwards_is_kept_as_said() -> None:
    # both ends name their years: nothing to move
    found = understand_dates("from 2023 to 2021", WEDNESDAY)
    assert found is not None and (found.start, found.end) == (D(2021, 1, 1), D(2023, 12, 31))


def test_march_as_a_verb_is_no_month() -> None:
    assert understand_dates("we plan to march from the square", WEDNESDAY) is None
