"""Quarters and halves of a year, the periods work is planned and reported in: "Q3 2026", "2026
Q3", "the third quarter of 2026", "in Q3", "last quarter", "H1 2026", "the first half of 2026",
2026年第三季度, 三季度, 上季度, 2026年上半年; the weeks of a month: "the first week of
November", "the last week of March 2025", 11月第一周; and numbered weeks, as calendars and
sprint plans count them: "week 19 of 2023", "2023-W19", "in week 19", 2023年第19周
(`search/dates/forms.py` reads days, months and weeks).

The first week of a month is its days 1-7, the second 8-14, the third 15-21, the fourth 22-28,
the last its final seven days: what a person means, whatever weekday the month starts on.

A numbered week is an ISO 8601 week (Monday to Sunday; week 1 holds the year's first Thursday),
the numbering of calendar apps and of `date +%V`.

A quarter is three calendar months (Q1 January to March); a half six. Without its year a period
is the latest one begun by today, as a month is ("in March"): notes are about what has happened.
"Q3" alone is a date only after a preposition ("what did we ship in Q3"), since a bare "Q3" may
be a name (an Audi Q3); with a year, or in words ("the third quarter"), it always is.
"""

from __future__ import annotations

import datetime as dt
import re

from openmemd.search.dates.arithmetic import (
    DAY,
    MAX_YEAR,
    MIN_YEAR,
    MONTH_NAME,
    Form,
    Resolved,
    full_year,
    latest_begun,
    month_number,
    month_range,
    relative,
)
from openmemd.search.dates.chinese import cn_number

_YEAR = r"(?P<y>(?:19|20)\d\d(?!\d)|'\d\d(?!\d))"
_NO_YEAR_AFTER = r"(?!\s*[-,]?\s*(?:(?:19|20)\d\d|'\d\d))"
_QUARTER_WORDS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3,
                  "fourth": 4, "4th": 4}
_HALF_WORDS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "上": 1, "下": 2}
_Q_WORD = r"(?P<q>first|second|third|fourth|1st|2nd|3rd|4th)"
_WEEK_WORDS = {**_QUARTER_WORDS, "last": 5, "最后": 5}
_MONTH = rf"(?P<m>{MONTH_NAME})\b\.?"
# What may lead a year-less "Q3" or "H1" (a bare one may be a name)
_LEAD = (r"(?i:\b(?:in|during|for|since|throughout|from|of|over|by|until|before|after)\s+"
         r"(?:the\s+)?)")


def _period(year: int, first_month: int, months: int) -> tuple[dt.date, dt.date]:
    return dt.date(year, first_month, 1), month_range(year, first_month + months - 1)[1]


def _index(text: str, words: dict[str, int]) -> int | None:
    """3, "third", 三 -> 3."""
    if text.isdigit():
        return int(text)
    return words.get(text.lower()) or cn_number(text)


def _named(match: re.Match[str], today: dt.date, words: dict[str, int], months: int,
           group: str) -> Resolved:
    """Period number `group` of `months` months, in the year the phrase gives, else the latest
    one begun by today."""
    index = _index(match[group], words)
    if index is None or not 1 <= index <= 12 // months:
        return None
    first_month = (index - 1) * months + 1
    year_text = match.groupdict().get("y")
    if year_text:
        year = full_year(year_text)
        return _period(year, first_month, months) if MIN_YEAR <= year <= MAX_YEAR else None
    return latest_begun(today, lambda year: _period(year, first_month, months))


def _quarter(match: re.Match[str], today: dt.date) -> Resolved:
    return _named(match, today, _QUARTER_WORDS, 3, "q")


def _half(match: re.Match[str], today: dt.date) -> Resolved:
    return _named(match, today, _HALF_WORDS, 6, "h")


def _week_of_month(match: re.Match[str], today: dt.date) -> Resolved:
    """The n-th seven days of a month (the last: its final seven), in the year given, else the
    latest such week begun by today."""
    word = match["w"].lower().lstrip("第")
    week = _WEEK_WORDS.get(word) or cn_number(word)
    name = match["m"]
    month = cn_number(name) if name[0].isdigit() or not name.isascii() else month_number(name)
    if not week or not 1 <= week <= 5 or not month or not 1 <= month <= 12:
        return None
    year_text = match.groupdict().get("y")
    if not year_text:
        return latest_begun(today, lambda year: _nth_week(year, month, week))
    year = full_year(year_text)
    return _nth_week(year, month, week) if MIN_YEAR <= year <= MAX_YEAR else None


def _nth_week(year: int, month: int, week: int) -> tuple[dt.date, dt.date]:
    last_day = month_range(year, month)[1]
    first = last_day - 6 * DAY if week == 5 else dt.date(year, month, 1 + 7 * (week - 1))
    return first, min(first + 6 * DAY, last_day)


def _numbered_week(match: re.Match[str], today: dt.date) -> Resolved:
    """ISO week n of the year given, else the latest week n begun by today."""
    week = int(match["n"])
    year_text = match.groupdict().get("y")

    def iso_week(year: int) -> tuple[dt.date, dt.date]:
        first = dt.date.fromisocalendar(year, week, 1)
        return first, first + 6 * DAY

    if not 1 <= week <= 53:
        return None
    try:
        if not year_text:
            return latest_begun(today, iso_week)
        year = full_year(year_text)
        return iso_week(year) if MIN_YEAR <= year <= MAX_YEAR else None
    except ValueError:  # week 53 of a year that has 52
        return None


@relative
def _relative_quarter(match: re.Match[str], today: dt.date) -> Resolved:
    """this/current quarter: today's; last/previous quarter: the one before; the past
    quarter: the three months up to today. 本季度, 上季度 alike."""
    which = match["which"].lower()
    if which == "past":
        return today - 91 * DAY, today
    start_month = (today.month - 1) // 3 * 3 + 1
    year = today.year
    if which in ("last", "previous", "上"):
        start_month -= 3
        if start_month < 1:
            start_month, year = start_month + 12, year - 1
    return _period(year, start_month, 3)


_I = re.IGNORECASE
PERIOD_FORMS: tuple[Form, ...] = (
    # Q3 2026, Q3 '26, Q3-2026, the third quarter of 2026
    (re.compile(rf"\b[Qq](?P<q>[1-4])[\s,-]*{_YEAR}"), _quarter),
    (re.compile(rf"(?i:\b(?:the\s+)?{_Q_WORD}\s+quarter(?:\s+of)?)[\s,]*{_YEAR}"), _quarter),
    # 2026 Q3, 2026-Q3, 2026年Q3, 2026年第三季度
    (re.compile(rf"(?<!\d){_YEAR}(?:\s*年\s*|[\s-]?)[Qq](?P<q>[1-4])\b"), _quarter),
    (re.compile(r"(?<!\d)(?P<y>\d{4})\s*年\s*第?(?P<q>[一二三四1-4])\s*季度"), _quarter),
    # in Q3, during the third quarter, 第三季度, 三季度
    (re.compile(rf"{_LEAD}[Qq](?P<q>[1-4])\b{_NO_YEAR_AFTER}"), _quarter),
    (re.compile(rf"(?i:\b(?:the\s+)?{_Q_WORD}\s+quarter\b)(?!\s+of\s+(?:19|20)\d\d)"), _quarter),
    (re.compile(r"(?<![\d年])第?(?P<q>[一二三四1-4])\s*季度"), _quarter),
    # last quarter, this quarter, the past quarter, 上季度, 本季度, 这个季度
    (re.compile(r"\b(?:the\s+)?(?P<which>last|this|previous|current|past)\s+quarter\b", _I),
     _relative_quarter),
    (re.compile(r"(?P<which>上|本|这)(?:个|一)?季度"), _relative_quarter),
    # H1 2026, 2026 H1, the first half of 2026, 2026年上半年, in H2, 上半年
    (re.compile(rf"\b[Hh](?P<h>[12])[\s,-]*{_YEAR}"), _half),
    (re.compile(rf"(?<!\d){_YEAR}[\s-]?[Hh](?P<h>[12])\b"), _half),
    (re.compile(rf"(?i:\b(?:the\s+)?(?P<h>first|second|1st|2nd)\s+half\s+of)\s+{_YEAR}"), _half),
    (re.compile(rf"{_LEAD}[Hh](?P<h>[12])\b{_NO_YEAR_AFTER}"), _half),
    (re.compile(r"(?:(?P<y>\d{4})\s*年\s*)?(?P<h>上|下)半年"), _half),
    # the first week of November, the last week of March 2025, 11月第一周, 十一月的最后一周
    (re.compile(rf"(?i:\b(?:the\s+)?(?P<w>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+"
                rf"week\s+(?:of|in)\s+){_MONTH}(?:,?\s*{_YEAR})?", _I), _week_of_month),
    (re.compile(r"(?:(?P<y>\d{4})\s*年\s*)?(?P<m>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月"
                r"的?\s*(?P<w>第[一二三四1-4]|最后)一?个?(?:周|星期|礼拜|週)"),
     _week_of_month),
    # week 19 of 2023, week 19, 2023; 2023-W19, 2023W19, W19 2023; in week 19, calendar week 19;
    # 2023年第19周, 第19周 ("week 19" alone may count something else: "week 19 of the course")
    (re.compile(rf"(?i:\b(?:calendar\s+)?week\s+(?P<n>\d{{1,2}})(?:\s+of|,)?)\s*{_YEAR}"),
     _numbered_week),
    (re.compile(rf"(?<!\d){_YEAR}-?[Ww](?P<n>\d\d)\b"), _numbered_week),
    (re.compile(rf"\b[Ww](?P<n>\d\d)[\s,]+{_YEAR}"), _numbered_week),
    (re.compile(r"(?i:\b(?:in|during|for|since|from|of|over|by|until|before|after)\s+(?:the\s+)?"
                r"(?:calendar\s+)?week\s+|\bcalendar\s+week\s+)(?P<n>\d{1,2})\b"
                r"(?!\s*(?:of\s+(?!(?:19|20)\d\d)|[-,]?\s*(?:19|20)\d\d))"), _numbered_week),
    (re.compile(r"(?:(?P<y>\d{4})\s*年\s*)?第\s*(?P<n>\d{1,2})\s*(?:周|週|星期)(?!年)"),
     _numbered_week),  # 第19周年: an anniversary
)
