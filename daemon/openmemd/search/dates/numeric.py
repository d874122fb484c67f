"""Dates in digits, whose numbers the pattern already holds: ISO 2023-03-27, 20230327, the
month 2023-03, 3/27/2023 and 27.03.2023, "on 3/27", "Monday 5/8" (`search/dates/forms.py` finds
them with the other forms; no library reads them).

Which number is the month: a/b/yyyy is month first (the US order) unless a > 12, which only a
day can be; a.b.yyyy (the European order) is day first; a weekday said with it picks the
reading that falls on it ("Monday 8/5/2023" is May 8th, `weekday_reading`; "Monday 5/8", with
no year, the latest day either reading names that fell on a Monday).
"""

from __future__ import annotations

import datetime as dt
import re

from openmemd.search.dates.arithmetic import (
    MAX_YEAR,
    MIN_YEAR,
    WEEKDAY_WORD,
    Form,
    Resolved,
    full_year,
    latest_not_after,
    month_range,
    one_day,
    weekday_number,
    ymd,
)


def _iso(match: re.Match[str], today: dt.date) -> Resolved:
    return one_day(ymd(int(match["y"]), int(match["m"]), int(match["d"])))


def _iso_month(match: re.Match[str], today: dt.date) -> Resolved:
    year, month = int(match["y"]), int(match["m"])
    if not (MIN_YEAR <= year <= MAX_YEAR and 1 <= month <= 12):
        return None
    return month_range(year, month)


def _numeric(match: re.Match[str], today: dt.date) -> Resolved:
    """a/b/yyyy: month first (the US order) unless a > 12, which only a day can be;
    a.b.yyyy (the European order) is day first."""
    a, b, year = int(match["a"]), int(match["b"]), full_year(match["y"])
    month, day = (b, a) if match["sep"] == "." or a > 12 else (a, b)
    return one_day(ymd(year, month, day))


# a/b/yyyy, a.b.yy, a-b-yyyy: read by `_numeric`, reread by `weekday_reading`
_NUMERIC = r"(?P<a>\d{1,2})(?P<sep>[/.-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4}|\d{2})"


def weekday_reading(text: str, day: dt.date, weekday: int) -> dt.date:
    """The day a numeric date said with its weekday names ("Monday 05.08.2023", "Mon 8/5/2023"):
    `day`, as `_numeric` read it, unless it falls on another weekday and the date read the
    other way round (month and day swapped) falls on `weekday` (0 = Monday)."""
    m = re.fullmatch(_NUMERIC, text.strip())
    if day.weekday() == weekday or m is None or max(int(m["a"]), int(m["b"])) > 12:
        return day
    other = ymd(day.year, day.day, day.month)
    return other if other is not None and other.weekday() == weekday else day


def _month_day(match: re.Match[str], today: dt.date) -> Resolved:
    """on 3/27: month first, unless the first number can only be a day."""
    a, b = int(match["a"]), int(match["b"])
    month, day = (b, a) if a > 12 else (a, b)
    if not 1 <= month <= 12:
        return None
    found = latest_not_after(today, month, day)
    return None if found is None else (found, found, False)


def _weekday_month_day(match: re.Match[str], today: dt.date) -> Resolved:
    """Monday 5/8: of the two readings (May 8th, August 5th), the latest day not after today
    that fell on that weekday (a day of the year meets each weekday within 11 years). With its
    year, "Mon 8/5/2023", the reading `weekday_reading` picks, as for "Monday 8/5/2023"."""
    weekday = weekday_number(match["wd"])
    if match["y"]:
        read = _numeric(match, today)
        if read is None:
            return None
        picked = weekday_reading(match.string[match.start("a"):match.end("y")], read[0], weekday)
        return picked, picked
    if match["sep"] != "/":
        return None  # "Monday 5-8": hours, more likely than a day
    a, b = int(match["a"]), int(match["b"])
    found: list[dt.date] = []
    for month, day in ((a, b), (b, a)):
        for back in range(12):
            date = ymd(today.year - back, month, day) if 1 <= month <= 12 else None
            if date is not None and date <= today and date.weekday() == weekday:
                found.append(date)
                break
    return (max(found), max(found)) if found else None


_I = re.IGNORECASE
NUMERIC_FORMS: tuple[Form, ...] = (
    # ISO 2023-03-27 (also 2023/03/27, 2023.03.27)
    (re.compile(r"(?<![\d./-])(?P<y>\d{4})([-/.])(?P<m>\d{1,2})\2(?P<d>\d{1,2})(?![\d]|[./-]\d)"),
     _iso),
    # 20230327, as in file names
    (re.compile(r"(?<![\d./-])(?P<y>(?:19|20)\d\d)(?P<m>0[1-9]|1[0-2])(?P<d>[0-2]\d|3[01])"
                r"(?![\d]|[./-]\d)"), _iso),
    # ISO month 2023-03
    (re.compile(r"(?<![\d./-])(?P<y>\d{4})-(?P<m>\d{2})(?![\d]|[./-]\d)"), _iso_month),
    # 3/27/2023, 27/3/2023, 3-27-2023, 27.03.2023
    (re.compile(rf"(?<![\d./-]){_NUMERIC}(?![\d]|[./-]\d)"), _numeric),
    # on 3/27 (a fraction without its preposition)
    (re.compile(r"\bon\s+(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\d/])", _I), _month_day),
    # Monday 5/8, Mon (8/5), Mon 8/5/2023: the reading that fell on that weekday
    (re.compile(rf"\b(?P<wd>{WEEKDAY_WORD}),?\s+\(?(?P<a>\d{{1,2}})(?P<sep>[/.-])(?P<b>\d{{1,2}})"
                r"(?:(?P=sep)(?P<y>\d{4}|\d{2}))?(?![\d/]|[.-]\d)", _I), _weekday_month_day),
)
