"""Holidays a person dates things by: "what did we do at Christmas", "notes from New Year's Eve",
"over Easter 2025", "last Thanksgiving", "Mother's Day 2023", 圣诞节, 去年元旦, 国庆节, 中秋节
(conventions:
`search/dates/forms.py`; without a year, the latest one not after today).

A holiday said with "last" or "this" or with its year (2025年圣诞节, 去年元旦) is that day. Said
after a preposition ("at Christmas", "during Thanksgiving"; a Chinese name alone) it is the
latest one only when the query asks for the day itself ("what did we do at Christmas"): with
anything else asked ("what tradition does Tim love during Thanksgiving") it may be every
Thanksgiving, so it stays one of the query's words (`arithmetic.topical`). Without either
it is a topic ("christmas presents for mum", "what are my new year's resolutions", "the
easter egg in the app").

Which days: Christmas Eve, Christmas, Boxing Day, New Year's Eve and Day, Valentine's Day,
Halloween, Easter Sunday (the Western date) with Good Friday and Easter Monday; the United
States' Thanksgiving (November's fourth Thursday), Mother's Day (May's second Sunday), Father's
Day (June's third Sunday), Memorial Day (May's last Monday), Labor Day (September's first
Monday) and Independence Day (July 4th); 国庆节 is its holiday week, October 1-7. The Chinese
festivals of the lunar calendar are dated by borax's lunar calendar (pure Python, 1900-2100,
imported only when one is named): 春节 and "the Spring Festival" are its holiday week (正月初一
to 初七), "Chinese New Year" and "Lunar New Year" its first day, 除夕 the day before, 元宵节,
端午节 ("the Dragon Boat Festival"), 七夕, 中秋节 ("the Mid-Autumn Festival"), 重阳节; 清明节 and
冬至 by their solar terms; 劳动节 (五一) is its holiday week, May 1-5.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from openmemd.search.dates.arithmetic import (
    DAY,
    MAX_YEAR,
    MIN_YEAR,
    Form,
    Resolved,
    full_year,
    latest_begun,
    nth_weekday,
    topical,
    weekend_around,
)

_Days = Callable[[int], tuple[dt.date, dt.date]]


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


def _fixed(month: int, day: int, days: int = 1) -> _Days:
    return lambda year: (dt.date(year, month, day), dt.date(year, month, day + days - 1))


def _from_easter(offset: int) -> _Days:
    return lambda year: (easter(year) + offset * DAY,) * 2


def _nth(month: int, nth: int, weekday: int) -> _Days:
    """The `nth` `weekday` of `month` (-1: the last; 0 = Monday): Thanksgiving, Labor Day."""
    def days(year: int) -> tuple[dt.date, dt.date]:
        day = nth_weekday(year, month, nth, weekday)
        assert day is not None  # every month has four of each weekday and a last one
        return day, day
    return days


def _lunar(month: int, day: int, days: int = 1, offset: int = 0) -> _Days:
    """A day of the Chinese lunar calendar in the lunar year that begins in `year`."""
    def solar(year: int) -> tuple[dt.date, dt.date]:
        from borax.calendars.lunardate import LunarDate  # loaded when a festival is named

        first = LunarDate(year, month, day).to_solar_date() + offset * DAY
        return first, first + (days - 1) * DAY
    return solar


def _solar_term(name: str) -> _Days:
    """One of the 24 solar terms of the Chinese calendar (清明 falls on April 4th or 5th)."""
    def day(year: int) -> tuple[dt.date, dt.date]:
        from borax.calendars.lunardate import TermUtils

        first: dt.date = TermUtils.nth_term_day(year, TermUtils.get_index_for_name(name))
        return first, first
    return day


_ENGLISH = {
    "christmas eve": _fixed(12, 24), "xmas eve": _fixed(12, 24),
    "christmas": _fixed(12, 25), "xmas": _fixed(12, 25), "boxing day": _fixed(12, 26),
    "new year's eve": _fixed(12, 31), "nye": _fixed(12, 31), "new year's": _fixed(1, 1),
    "valentine's": _fixed(2, 14), "halloween": _fixed(10, 31),
    "good friday": _from_easter(-2), "easter": _from_easter(0), "easter monday": _from_easter(1),
    "thanksgiving": _nth(11, 4, 3), "mother's": _nth(5, 2, 6), "father's": _nth(6, 3, 6),
    "memorial": _nth(5, -1, 0), "labor": _nth(9, 1, 0), "labour": _nth(9, 1, 0),
    "independence": _fixed(7, 4), "chinese new year's": _lunar(1, 1),
    "lunar new year's": _lunar(1, 1), "spring festival": _lunar(1, 1, 7),
    "mid-autumn festival": _lunar(8, 15), "mid autumn festival": _lunar(8, 15),
    "dragon boat festival": _lunar(5, 5),
}
_CHINESE = {"平安夜": _fixed(12, 24), "圣诞节": _fixed(12, 25), "聖誕節": _fixed(12, 25),
            "圣诞": _fixed(12, 25), "元旦": _fixed(1, 1), "情人节": _fixed(2, 14),
            "万圣节": _fixed(10, 31), "国庆节": _fixed(10, 1, 7), "国庆": _fixed(10, 1, 7),
            "春节": _lunar(1, 1, 7), "农历新年": _lunar(1, 1, 7), "農曆新年": _lunar(1, 1, 7),
            "大年初一": _lunar(1, 1), "除夕": _lunar(1, 1, offset=-1),
            "大年三十": _lunar(1, 1, offset=-1), "年三十": _lunar(1, 1, offset=-1),
            "元宵节": _lunar(1, 15),
            "元宵": _lunar(1, 15), "端午节": _lunar(5, 5), "端午": _lunar(5, 5),
            "七夕": _lunar(7, 7), "中秋节": _lunar(8, 15), "中秋": _lunar(8, 15),
            "重阳节": _lunar(9, 9), "清明节": _solar_term("清明"), "清明": _solar_term("清明"),
            "冬至": _solar_term("冬至"), "劳动节": _fixed(5, 1, 5), "五一": _fixed(5, 1, 5)}
_APOSTROPHE = re.compile(r"[’']")


def _key(name: str) -> str:
    """"New Years Day", "new year’s" -> "new year's"; "Christmas Day" -> "christmas"."""
    name = re.sub(r"\s+", " ", _APOSTROPHE.sub("'", name.lower()))
    name = re.sub(r"\s+(?:day|sunday)$", "", name)
    return re.sub(r"(year|valentine|mother|father)s?'?s?\b", r"\1's", name)


def _resolve(days: _Days, year_text: str | None,
             which: str, today: dt.date) -> Resolved:
    """The holiday of the year given, of this year or last ("this Christmas", 去年元旦), else
    the latest one begun by today."""
    if year_text:
        year = full_year(year_text)
        return days(year) if MIN_YEAR <= year <= MAX_YEAR else None
    which = " ".join(which.split())
    if which in ("this", "this year", "今年", "去年", "last year"):
        return days(today.year - (which in ("去年", "last year")))
    return latest_begun(today, days)


def _holiday(match: re.Match[str], today: dt.date) -> Resolved:
    return _resolve(_ENGLISH[_key(match["name"])], match.groupdict().get("year"),
                    (match.groupdict().get("which") or "").lower(), today)


def _holiday_weekend(match: re.Match[str], today: dt.date) -> Resolved:
    """"Labor Day weekend", "over Easter weekend 2023": the holiday's long weekend."""
    days = _holiday(match, today)
    return None if days is None else weekend_around(days[0], days[1])


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
         r"|thanksgiving(?:\s+day)?|(?:mother|father)[’']?s?\s+day|memorial\s+day"
         r"|labou?r\s+day|independence\s+day|(?:chinese|lunar)\s+new\s+year"
         r"|spring\s+festival|mid[-\s]autumn\s+festival|dragon\s+boat\s+festival)")
_CN_NAME = (r"(?P<name>平安夜|圣诞节|聖誕節|圣诞|元旦|情人节|万圣节|国庆节|国庆|春节"
            r"|农历新年|農曆新年|大年初一|大年三十|年三十|除夕"
            r"|元宵节|元宵|端午节|端午|七夕|中秋节|中秋|重阳节|清明节|清明|冬至|劳动节|五一)")
_YEAR = r"(?P<year>(?:19|20)\d\d(?!\d)|'\d\d(?!\d))"
_PREPOSITION = (r"(?:on|at|over|during|since|before|after|around|for|from|by|until|of|through"
                r"|throughout)\s+(?:the\s+)?")
_I = re.IGNORECASE
HOLIDAY_FORMS: tuple[Form, ...] = (
    # "last Thanksgiving", "this Christmas", "Christmas 2025", "on New Year's Eve 2025",
    # "Christmas in 2023", "Easter in the year 2023", "Easter '24"; "last year on Mother's Day",
    # "last year's Thanksgiving", "Easter of last year": that year's, not this year's moved back
    (re.compile(rf"\b(?P<which>last|this)\s+{_NAME}\b", _I), _holiday),
    (re.compile(rf"\b(?:{_PREPOSITION})?{_NAME}(?:,\s*|\s+)(?:(?:of|in)\s+(?:the\s+year\s+)?)?"
                rf"{_YEAR}", _I), _holiday),
    (re.compile(rf"\b(?P<which>(?:last|this)\s+year)(?:[’']s)?,?\s+(?:{_PREPOSITION})?{_NAME}\b",
                _I), _holiday),
    (re.compile(rf"\b(?:{_PREPOSITION})?{_NAME}(?:,\s*|\s+)(?:(?:of|in)\s+)?"
                rf"(?P<which>(?:last|this)\s+year)\b", _I), _holiday),
    # "Labor Day weekend", "last Easter weekend", "Memorial Day long weekend 2023"
    (re.compile(rf"\b(?:(?P<which>last|this)\s+)?{_NAME}\s+(?:long\s+)?weekend"
                rf"(?:(?:,\s*|\s+)(?:(?:of|in)\s+)?{_YEAR})?\b", _I), _holiday_weekend),
    # "at Christmas", "over Easter"
    (re.compile(rf"\b{_PREPOSITION}{_NAME}\b", _I), _any_holiday),
    # 2025年圣诞节, 去年元旦, 2023年的中秋节; 国庆节
    (re.compile(r"(?:(?P<y>(?:19|20)\d\d)\s*年\s*|(?P<ry>今年|去年))(?:的\s*)?"
                rf"{_CN_NAME}"), _holiday_cn),
    (re.compile(rf"(?P<y>)(?P<ry>){_CN_NAME}"), _any_holiday),
)
