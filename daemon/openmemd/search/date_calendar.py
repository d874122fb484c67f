"""Calendar arithmetic for the date forms (`search/date_forms.py`, `date_forms_cn.py`,
`date_forms_periods.py`): month names and years as written, months, ISO weeks (Monday to
Sunday), "the most recent such day not after today", and the resolver type every form has."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Callable

DAY = dt.timedelta(days=1)
MIN_YEAR, MAX_YEAR = 1900, 2099
# An English month name in any common spelling: "March", "Mar", "Sept" (no group, no dot)
MONTH_NAME = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
              r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")

# A form's answer: (first day, last day[, whether the phrase gave its year]), or None when the
# phrase is no date after all (February 30th, month 13).
Resolved = tuple[dt.date, dt.date] | tuple[dt.date, dt.date, bool] | None
Resolver = Callable[["re.Match[str]", dt.date], Resolved]
Form = tuple["re.Pattern[str]", Resolver]


def month_number(name: str) -> int:
    """March, Mar., mar -> 3 (a name MONTH_NAME matched)."""
    return _MONTHS.index(name[:3].lower()) + 1


def full_year(text: str) -> int:
    """2023, '23, 23 -> 2023."""
    year = int(text.lstrip("'"))
    return year + 2000 if year < 100 else year


def month_range(year: int, month: int) -> tuple[dt.date, dt.date]:
    return dt.date(year, month, 1), dt.date(year, month, calendar.monthrange(year, month)[1])


def week_of(day: dt.date) -> tuple[dt.date, dt.date]:
    monday = day - day.weekday() * DAY
    return monday, monday + 6 * DAY


def shift_months(day: dt.date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def latest_not_after(today: dt.date, month: int, day: int | None = None) -> dt.date | None:
    """The most recent (month, day) not after today; None if it never exists (Feb 30)."""
    for year in range(today.year, today.year - 5, -1):  # a Feb 29th within four years
        try:
            found = dt.date(year, month, day or 1)
        except ValueError:
            continue
        if found <= today:
            return found
    return None


def ymd(year: int, month: int, day: int) -> dt.date | None:
    if not MIN_YEAR <= year <= MAX_YEAR:
        return None
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def year_range(year: int) -> tuple[dt.date, dt.date]:
    return dt.date(year, 1, 1), dt.date(year, 12, 31)


def most_recent_weekday(today: dt.date, weekday: int) -> dt.date:
    """The latest day before today that is `weekday` (0 = Monday)."""
    return today - ((today.weekday() - weekday - 1) % 7 + 1) * DAY


RELATIVE: set[Resolver] = set()


def relative(resolve: Resolver) -> Resolver:
    """Marks a form whose day is counted from today ("yesterday", "last week"), not named."""
    RELATIVE.add(resolve)
    return resolve


def offset(days: int) -> Resolver:
    def resolve(match: re.Match[str], today: dt.date) -> Resolved:
        return today - days * DAY, today - days * DAY
    return relative(resolve)
