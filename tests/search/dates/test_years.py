"""How a year is said beside a day (`search/dates/forms.py`, `query._join`): two digits after a
day and a month where the phrase ends ("8th May 23"), "in the year 2023", 2023年的5月8日. Two
digits followed by more words are no year ("8 May, 23 people came" counts people). The other
forms: tests/search/dates/test_query.py."""

from __future__ import annotations

import datetime as dt

from date_rows import Row, each_row, resolves

from openmemd.search.dates.query import understand_dates

TODAY = dt.date(2026, 12, 5)
D = dt.date

ROWS: list[Row] = [
    ("what did we talk about on 8th May 23", TODAY, D(2023, 5, 8), D(2023, 5, 8), True),
    ("8 May 23?", TODAY, D(2023, 5, 8), D(2023, 5, 8), True),
    ("met on 8 May 23, then left", TODAY, D(2023, 5, 8), D(2023, 5, 8), False),
    ("the 8th of May 23 (Monday)", TODAY, D(2023, 5, 8), D(2023, 5, 8), True),
    ("notes from 27 March 99", TODAY, D(1999, 3, 27), D(1999, 3, 27), True),
    ("what happened on May 8th in the year 2023", TODAY, D(2023, 5, 8), D(2023, 5, 8), True),
    ("in the year 2023 what did I learn", TODAY, D(2023, 1, 1), D(2023, 12, 31), False),
    ("2023年的5月8日聊了什么", TODAY, D(2023, 5, 8), D(2023, 5, 8), True),
    ("去年的5月8日", TODAY, D(2025, 5, 8), D(2025, 5, 8), True),
    # a colon after the day ends the phrase; before a digit it is a clock time
    ("2023, May 8th: what happened?", TODAY, D(2023, 5, 8), D(2023, 5, 8), True),
    ("on May 8: notes", TODAY, D(2026, 5, 8), D(2026, 5, 8), True),
]


@each_row(ROWS)
def test_a_year_said_beside_its_day(query: str, today: dt.date, first: dt.date,
                                    last: dt.date, about: bool) -> None:
    resolves(query, today, first, last, about)


def test_two_digits_followed_by_words_are_no_year() -> None:
    found = understand_dates("on 8 May, 23 people came to the party", TODAY)
    assert found is not None and (found.start, found.end) == (D(2026, 5, 8), D(2026, 5, 8))
    assert "23" in found.query


def test_a_colon_before_digits_is_a_clock_time() -> None:
    assert understand_dates("meeting March 3:30", TODAY) is None
