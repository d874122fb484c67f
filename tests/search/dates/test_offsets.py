"""Days counted from a day or month the query names (`search/dates/offsets.py`): "the day after
May 7, 2023" is May 8th alone, a week counted from a day the seven days beside it, "the weekend
of" a day its week's Saturday and Sunday ("the 4th of July weekend" the day and the weekend
beside it), an ordinal weekday of a month its day; the relative
word inside the phrase ("the weekend", "Monday") is no day of this week."""

from __future__ import annotations

import datetime as dt

from date_rows import Row, each_row, resolves

from openmemd.search.dates.arithmetic import nth_weekday
from openmemd.search.dates.query import understand_dates

FRI = dt.date(2026, 7, 10)  # a Friday
D = dt.date

ROWS: list[Row] = [
    ("the day after May 7, 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("what happened the day before May 9th 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("two days after May 6, 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("3 days before 11 May 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("a day following 7 May 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("the week after May 8, 2023", FRI, D(2023, 5, 9), D(2023, 5, 15), True),
    ("two weeks before May 22, 2023", FRI, D(2023, 5, 8), D(2023, 5, 14), True),
    ("the weekend of May 6th 2023", FRI, D(2023, 5, 6), D(2023, 5, 7), True),
    ("the weekend of May 6-7, 2023", FRI, D(2023, 5, 6), D(2023, 5, 7), True),  # not this one
    # a day's weekend: the day with the Saturday and Sunday beside it (a Monday: Sat-Mon)
    ("July 4th weekend 2022", FRI, D(2022, 7, 2), D(2022, 7, 4), True),
    ("what did we do on the 4th of July weekend", FRI, D(2026, 7, 4), D(2026, 7, 5), True),
    ("the weekend after Saturday, May 6 2023", FRI, D(2023, 5, 13), D(2023, 5, 14), True),
    ("the weekend before April 10, 2023", FRI, D(2023, 4, 8), D(2023, 4, 9), True),
    ("the day before last Friday", FRI, D(2026, 7, 2), D(2026, 7, 2), True),
    ("the first Monday of May 2023", FRI, D(2023, 5, 1), D(2023, 5, 1), True),
    ("the second Monday in May 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    # a weekday counted from a day: the first one after (or before) it
    ("the Monday after May 1, 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("the Friday before May 8, 2023", FRI, D(2023, 5, 5), D(2023, 5, 5), True),
    ("the Monday before Monday, May 8 2023", FRI, D(2023, 5, 1), D(2023, 5, 1), True),
    # a month without its year after "of": the latest such day not after today
    ("the first Monday of May", FRI, D(2026, 5, 4), D(2026, 5, 4), True),
    ("the last Friday of March 2025", FRI, D(2025, 3, 28), D(2025, 3, 28), True),
    # a month without its year whose counted day is still to come is last year's
    ("the last Friday in July", FRI, D(2025, 7, 25), D(2025, 7, 25), True),
    ("the first Friday in July", FRI, D(2026, 7, 3), D(2026, 7, 3), True),
]


@each_row(ROWS)
def test_a_day_counted_from_a_named_one_is_that_day(
        query: str, today: dt.date, first: dt.date, last: dt.date, about: bool) -> None:
    found = resolves(query, today, first, last, about)
    assert len(found.ranges) == 1, found.ranges


def test_with_a_topic_the_named_day_is_searched_too() -> None:
    """In a log of what was said each day, what happened two weeks before August 11th was
    told on August 11th: with a topic asked, both are the query's dates."""
    found = understand_dates("the puppy Maria got two weeks before August 11, 2023", FRI)
    assert found is not None and not found.about_date
    assert [(r.start, r.end) for r in found.ranges] == [(D(2023, 7, 28), D(2023, 8, 3)),
                                                        (D(2023, 8, 11), D(2023, 8, 11))]
    assert found.query == "the puppy Maria got"
    # a weekday found in its month was told on no day of it
    found = understand_dates("the budget we set on the first Monday of May 2023", FRI)
    assert found is not None and [(r.start, r.end) for r in found.ranges] == [
        (D(2023, 5, 1), D(2023, 5, 1))]


def test_last_weekend_before_a_day_keeps_the_day_it_was_said_on() -> None:
    """'last weekend' as of a day is the anchor rule's (search/dates/query.py): both are kept."""
    found = understand_dates("the trip last weekend before April 10, 2023", FRI)
    assert found is not None
    assert [(r.start, r.end) for r in found.ranges] == [(D(2023, 4, 8), D(2023, 4, 9)),
                                                        (D(2023, 4, 10), D(2023, 4, 10))]


def test_the_nth_weekday_of_a_month() -> None:
    assert nth_weekday(2023, 5, 2, 6) == D(2023, 5, 14)  # Mother's Day
    assert nth_weekday(2023, 5, -1, 0) == D(2023, 5, 29)  # Memorial Day
    assert nth_weekday(2024, 2, -1, 3) == D(2024, 2, 29)  # a leap day
    assert nth_weekday(2023, 2, 5, 0) is None  # February 2023 has four Mondays


def test_a_weekend_in_a_year_without_its_day_is_no_error() -> None:
    # February 29th of 2023 does not exist: the day stays as read, and nothing raises
    found = understand_dates("Feb 29 weekend 2023", FRI)
    assert found is not None and found.start == D(2024, 2, 29)
