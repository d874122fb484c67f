"""What the date-form tests share (tests/search/dates/): rows of (query, today, first
day, last day, about the date itself?) and the check each row makes of `understand_dates`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pytest

from openmemd.search.dates.query import DateQuery, understand_dates

Row = tuple[str, dt.date, dt.date, dt.date, bool]


def each_row(rows: Sequence[Row]) -> Any:
    """pytest's parametrize over `rows`, each test named by its query."""
    return pytest.mark.parametrize(("query", "today", "first", "last", "about"), rows,
                                   ids=[r[0] for r in rows])


def resolves(query: str, today: dt.date, first: dt.date, last: dt.date, about: bool,
             **options: Any) -> DateQuery:
    """Asserts `query`, asked on `today`, names days `first`..`last` and is (or is not) about
    the date itself; returns what was understood."""
    found = understand_dates(query, today, **options)
    assert found is not None, query
    assert (found.start, found.end) == (first, last)
    assert found.about_date is about
    return found
