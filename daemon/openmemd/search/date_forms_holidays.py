"""Holidays a person dates things by: "what did we do at Christmas", "notes from New Year's Eve",
"over Easter 2025", "last Thanksgiving", 圣诞节, 去年元旦, 国庆节 (conventions:
`search/date_forms.py`; without a year, the latest one not after today).

A holiday said with "last" or "this" or with its year (2025年圣诞节, 去年元旦) is that day. Said
after a preposition ("at Christmas", "during Thanksgiving"; a Chinese name alone) it is the
latest one only when the query asks for the day itself ("what did we do at Christmas"): with
anything else asked ("what tradition does Tim love during Thanksgiving") it may be every
Thanksgiving, so it stays one of the query's words (`date_calendar.topical`). Without either
it is a topic ("christmas presents for mum", "what are my new year's resolutions", "the
easter egg in the app").

Which days: Christmas Eve, Christmas, Boxing Day, New Year's Eve and Day, Valentine's Day,
Halloween, Easter Sunday (the Western date) with Good Friday and Easter Monday, Thanksgiving
(the United States': November's fourth Thursday); 国庆节 is its holiday week, October 1-7.
The lunar-calendar festivals (春节, 中秋) are not read: that needs a lunar calendar.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from openmemd.search.date_calendar import (
    DAY,
    MAX_YEAR,
    MIN_YEAR,
    Form,
    Resolved,
    full_year,
    latest_begun,
    topical,
)


def easter(year: int) -> dt.date:
    """Easter Sunday of the Gregorian calendar (the anonymous algorithm, Meeus/Jones/Butcher)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    ell = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * ell) // 451
    month, day = divmod(h + ell - 7 * m + 114, 31)
    return dt.date(year, month, day + 1)


def _thanksgiving(year: int) -> dt.date:
    first = dt.date(year, 11, 1)
    return first + ((3 - first.weekday()) % 7 + 21) * DAY


def _fixed(month: int, day: int, days: int = 1) -> Callable[[int], tuple[dt.date, dt.date]]:
    return lambda year: (dt.date(year, month, day), dt.date(year, month, day + days - 1))


def _from_easter(offset: int) -> Callable[[int], tuple[dt.date, dt.date]]:
    return lambda year: (easter(year) + offset * DAY,) * 2


_ENGLISH = {
    "christmas eve": _fixed(12, 24), "xmas eve": _fixed(12, 24),
    "christmas": _fixed(12, 25), "xmas": _fixed(12, 25), "boxing day": _fixed(12, 26),
    "new year's eve": _fixed(12, 31), "nye": _fixed(12, 31), "new year's": _fixed(1, 1),
    "valentine's": _fixed(2, 14), "halloween": _fixed(10, 31),
    "good friday": _from_easter(-2), "easter": _from_easter(0), "easter monday": _from_easter(1),
    "thanksgiving": lambda year: (_thanksgiving(year),) * 2,
}
_CHINESE = {"平安夜": _fixed(12, 24), "圣诞节": _fixed(12, 25), "聖誕節": _fixed(12, 25),
            "圣诞": _fixed(12, 25), "元旦": _fixed(1, 1), "情人节": _fixed(2, 14),
            "万圣节": _fixed(10, 31), "国庆节": _fixed(10, 1, 7), "国庆": _fixed(10, 1, 7)}
_APOSTROPHE = re.compile(r"[’']")


def _key(name: str) -> str:
    """"New Years Day", "new year’s" -> "new year's"; "Christmas Day" -> "christmas"."""
    name = re.sub(r"\s+", " ", _APOSTROPHE.sub("'", name.lower()))
    name = re.sub(r"\s+(?:day|sunday)$", "", name)
    return re.sub(r"(year|valentine)s?'?s?\b", r"\1's", name)


def _resolve(days: Callable[[int], tuple[dt.date, dt.date]], year_text: str | None,
             which: str, today: dt.date) -> Resolved:
    """The holiday of the year given, of this year or last ("this Christmas", 去年元旦), else
    the latest one begun by today."""
    if year_text:
        year = full_year(year_text)
        return days(year) if MIN_YEAR <= year <= MAX_YEAR else None
    if which in ("this", "今年", "去年"):
        return days(today.year - (which == "去年"))
    return latest_begun(today, days)


def _holiday(match: re.Match[str], today: dt.date) -> Resolved:
    return _resolve(_ENGLISH[_key(match["name"])], match.groupdict().get("year"),
                    (match.groupdict().get("which") or "").lower(), today)


def _holiday_cn(match: re.Match[str], today: dt.date) -> Resolved:
    return _resolve(_CHINESE[match["name"]], match["y"], match["ry"] or "", today)


@topical
def _any_holiday(match: re.Match[str], today: dt.date) -> Resolved:
    """"during Thanksgiving", 圣诞节: the latest one, unless the query asks about more than the
    day ("what tradition does Tim love during Thanksgiving": every Thanksgiving)."""
    return _holiday_cn(match, today) if "y" in match.groupdict() else _holiday(match, today)


_NAME = (r"(?P<name>christmas\s+eve|xmas\s+eve|christmas(?:\s+day)?|xmas|boxing\s+day"
         r"|new\s+year[’']?s?\s+eve|nye|new\s+year[’']?s?(?:\s+day)?"
         r"|valentine[’']?s?(?:\s+day)?|halloween|good\s+friday|easter(?:\s+sunday|\s+monday)?"
         r"|thanksgiving(?:\s+day)?)")
_CN_NAME = r"(?P<name>平安夜|圣诞节|聖誕節|圣诞|元旦|情人节|万圣节|国庆节|国庆)"
_YEAR = r"(?P<year>(?:19|20)\d\d(?!\d)|'\d\d(?!\d))"
_PREPOSITION = (r"(?:on|at|over|during|since|before|after|around|for|from|by|until|of|through"
                r"|throughout)\s+(?:the\s+)?")
_I = re.IGNORECASE
HOLIDAY_FORMS: tuple[Form, ...] = (
    # "last Thanksgiving", "this Christmas", "Christmas 2025", "on New Year's Eve 2025",
    # "Easter '24"
    (re.compile(rf"\b(?P<which>last|this)\s+{_NAME}\b", _I), _holiday),
    (re.compile(rf"\b(?:{_PREPOSITION})?{_NAME}(?:,\s*|\s+)(?:of\s+)?{_YEAR}", _I), _holiday),
    # "at Christmas", "over Easter"
    (re.compile(rf"\b{_PREPOSITION}{_NAME}\b", _I), _any_holiday),
    # 2025年圣诞节, 去年元旦; 国庆节
    (re.compile(r"(?:(?P<y>(?:19|20)\d\d)\s*年\s*|(?P<ry>今年|去年))"
                rf"{_CN_NAME}"), _holiday_cn),
    (re.compile(rf"(?P<y>)(?P<ry>){_CN_NAME}"), _any_holiday),
)
