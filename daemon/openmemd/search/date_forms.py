"""The ways a query names a day, a month, a year or a week, each a pattern and a resolver.

`find_spans(query, today)` returns every date phrase a form resolves (below; Chinese ones in
`date_forms_cn.py`, quarters, halves and a month's weeks in `date_forms_periods.py`) as `Span`s
(where it stands, the first and last day it means); `search/dates.py` picks among them.

A date phrase is found by a pattern here, never by scanning the query with a date library:
`dateparser.search` reads "we" as Wednesday, "3.12" as a time and "may" as a month, and a
wrong date both hides words from the keyword leg and pulls the wrong notes up. Each pattern
needs a month name, a date-shaped number (two separators and a year, ISO, 年/月/日) or a
relative word with its unit ("last week", "three days ago", 上周), so "version 3.12",
"error 404" and "in 2 minutes" name no date.

What is parsed by whom:
- English words (month and weekday names in any spelling, ordinals, number words in "three
  days ago") go to `dateparser` (offline, imported only when such a phrase is found).
- Numbers already split by the pattern (ISO, 3/27/2023, 2023年3月27日) are built directly:
  the pattern has the year, month and day in hand, and dateparser misreads partial Chinese
  dates (3月27号 → April 10th, 2023年3月 → year 3).
- Ranges ("last week", 上周, "this month") are calendar arithmetic: dateparser gives one point
  in time ("last week" → seven days ago), not the week.

Conventions: weeks run Monday to Sunday (ISO 8601, as Chinese 上周 is read); a date without
a year ("July 3rd", 3月27号, "in March") is the most recent one not after today, because
notes are about what has happened; "last Friday", "Friday" are the most recent Friday before
today, 上周五 and "Friday of last week" the Friday of last week, "this Friday"/这周五 the
Friday of this week; "on the 27th" is the latest 27th not after today; a count said loosely
("a couple of days ago": 2, "a few weeks ago": 3) is a unit either side of it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass

from openmemd.search.date_calendar import (
    DAY,
    MAX_YEAR,
    MIN_YEAR,
    MONTH_NAME,
    RELATIVE,
    Form,
    Resolved,
    full_year,
    latest_not_after,
    month_number,
    month_range,
    most_recent_weekday,
    offset,
    relative,
    shift_months,
    week_of,
    year_range,
    ymd,
)
from openmemd.search.date_forms_cn import CN_FORMS
from openmemd.search.date_forms_periods import PERIOD_FORMS


@dataclass(frozen=True)
class Span:
    """A date phrase of the query: characters [start, end), meaning days first..last."""

    start: int
    end: int
    first: dt.date
    last: dt.date
    year_given: bool = True  # False for "July 3rd": a range's other end may lend its year
    relative: bool = False  # counted from today ("last week"), not named ("May 8th 2023")


# -- English words, parsed by dateparser ----------------------------------------------------------

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WEEKDAY_WORD = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?\.?"
_MONTH = rf"{MONTH_NAME}\.?"
# Full names for a month without a day or year ("in March"); "may" only as "May" (a verb too).
_MONTH_FULL = (r"(?:(?i:january|february|march|april|june|july|august|september|october"
               r"|november|december)|May)")
_DAYNUM = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?(?![\d:])"  # not "March 3:30"
_YEAR = r"(?:(?:19|20)\d\d(?!\d|[:.]\d)|'\d\d(?!\d))"
_NUMBER_WORD = (r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
                r"|\d{1,3})")
_UNIT = r"(?:days?|weeks?|months?|years?)"
_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "few": 3,
           "several": 3}
_COUNT = (r"(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
          r"|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|several)")
_ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
                  "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth",
                  "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth",
                  "twentieth")
_ORDINALS = {w: i for i, w in enumerate(_ORDINAL_WORDS, 1)} | {
    f"{tens}{sep}{w}": base + i for tens, base in (("twenty", 20), ("thirty", 30))
    for sep in ("-", " ", "") for i, w in enumerate(_ORDINAL_WORDS[:9], 1)} | {"thirtieth": 30}
_ORDINAL = "(?i:" + "|".join(sorted(map(re.escape, _ORDINALS), key=len, reverse=True)) + ")"
# What runs from one day of a month to another: "27-29", "1 to 10", "27th through the 29th".
_TO = r"\s*(?:-|–|—|to|through|thru|until|till)\s*(?:the\s+)?"


def parse_words(text: str, today: dt.date) -> tuple[dt.date, str] | None:
    """(date, period) of an English date phrase, by dateparser; None if it cannot read it.

    Imported here, on the first query that names a date in words: the library and its
    language data cost ~0.5 s once, which a daemon must not pay at start or for any other
    query."""
    from dateparser.date import DateDataParser

    parser = DateDataParser(languages=["en"], settings={
        "RELATIVE_BASE": dt.datetime.combine(today, dt.time(12)),
        "PREFER_DATES_FROM": "past", "PREFER_DAY_OF_MONTH": "first",
        "RETURN_AS_TIMEZONE_AWARE": False})
    data = parser.get_date_data(text)
    if data.date_obj is None:
        return None
    return data.date_obj.date(), data.period or "day"


def _period_range(day: dt.date, period: str) -> tuple[dt.date, dt.date]:
    if period == "year":
        return year_range(day.year)
    if period == "month":
        return month_range(day.year, day.month)
    if period == "week":
        return week_of(day)
    return day, day


def _words(match: re.Match[str], today: dt.date) -> Resolved:  # "July '26": dateparser's 26th
    found = parse_words(re.sub(r"'(\d\d)(?!\d)", r"20\1", match.group()), today)
    if found is None or not MIN_YEAR <= found[0].year <= MAX_YEAR:
        return None
    first, last = _period_range(*found)
    return first, last, match.groupdict().get("year") is not None


def _month_word(match: re.Match[str], today: dt.date) -> Resolved:
    """in March: the month's name alone (dateparser reads no "mid-" or "in")."""
    found = parse_words(match["m"], today)
    return None if found is None else (*month_range(found[0].year, found[0].month), False)


@relative
def _ago(match: re.Match[str], today: dt.date) -> Resolved:
    found = parse_words(match.group(), today)
    return None if found is None else _period_range(*found)


# -- numbers in hand ------------------------------------------------------------------------------

def _iso(match: re.Match[str], today: dt.date) -> Resolved:
    day = ymd(int(match["y"]), int(match["m"]), int(match["d"]))
    return None if day is None else (day, day)


def _iso_month(match: re.Match[str], today: dt.date) -> Resolved:
    year, month = int(match["y"]), int(match["m"])
    if not (MIN_YEAR <= year <= MAX_YEAR and 1 <= month <= 12):
        return None
    return month_range(year, month)


def _numeric(match: re.Match[str], today: dt.date) -> Resolved:
    """a/b/yyyy: month first (the US order) unless a > 12, which only a day can be;
    a.b.yyyy (the European order) is day first."""
    a, b, year = int(match["a"]), int(match["b"]), int(match["y"])
    if len(match["y"]) == 2:
        year += 2000
    month, day = (b, a) if match["sep"] == "." or a > 12 else (a, b)
    found = ymd(year, month, day)
    return None if found is None else (found, found)


def _month_day(match: re.Match[str], today: dt.date) -> Resolved:
    """on 3/27: month first, unless the first number can only be a day."""
    a, b = int(match["a"]), int(match["b"])
    month, day = (b, a) if a > 12 else (a, b)
    if not 1 <= month <= 12:
        return None
    found = latest_not_after(today, month, day)
    return None if found is None else (found, found, False)


def _year(match: re.Match[str], today: dt.date) -> Resolved:
    year = int(match["y"])
    return year_range(year)


def _day_range(match: re.Match[str], today: dt.date) -> Resolved:
    """March 27-29, 2023; 27 to 29 March: days of one month (without a year, the range
    begun most recently: on March 28th, "March 27 to 29" is this year's)."""
    month = month_number(match["mon"])
    first, last = _number(match["d1"]), _number(match["d2"])
    if first >= last:
        return None
    if match["year"]:
        year = full_year(match["year"])
        start, end = ymd(year, month, first), ymd(year, month, last)
        return None if start is None or end is None else (start, end)
    start = latest_not_after(today, month, first)
    end = None if start is None else ymd(start.year, month, last)
    return None if start is None or end is None else (start, end, False)


def _named_day(match: re.Match[str], today: dt.date) -> Resolved:
    """8-May-2023, "the eighth of May 2023", "May twenty-seventh": a month's name and the day
    in digits or in words (which dateparser does not read)."""
    month = month_number(match["mon"])
    day = _ORDINALS.get(match["d"].lower()) or _number(match["d"])
    if match["year"]:
        found = ymd(full_year(match["year"]), month, day)
        return None if found is None else (found, found)
    found = latest_not_after(today, month, day)
    return None if found is None else (found, found, False)


def _number(text: str) -> int:
    return int(re.sub(r"\D", "", text))


@relative
def _day_of_month(match: re.Match[str], today: dt.date) -> Resolved:
    """on the 27th: the latest 27th not after today."""
    wanted = _number(match["d"])
    for back in range(12):
        day = ymd(*shift_months(today, -back), wanted)
        if day is not None and day <= today:
            return day, day
    return None


# -- relative English -----------------------------------------------------------------------------

@relative
def _relative_unit(match: re.Match[str], today: dt.date) -> Resolved:
    """last/past/previous/this/current week|month|year; "the week before last"."""
    which, unit = match["which"].lower(), match["unit"].lower()
    back = 0 if which in ("this", "current") else 2 if match["before"] else 1
    if which == "past":  # "the past week/month": the days up to today
        span = {"week": 7, "month": 30, "year": 365}[unit]
        return today - span * DAY, today
    if unit == "week":
        return week_of(today - 7 * back * DAY)
    if unit == "month":
        return month_range(*shift_months(today, -back))
    return year_range(today.year - back)


def _count(text: str) -> int:
    """12, twelve, a couple of, a few -> a number."""
    words = text.lower().split()
    return int(words[0]) if words[0].isdigit() else next(_COUNTS[w] for w in words
                                                         if w in _COUNTS)


@relative
def _past_n(match: re.Match[str], today: dt.date) -> Resolved:
    """the past/last N days|weeks: up to today."""
    n = _count(match["n"])
    days = n * {"day": 1, "week": 7, "month": 30, "year": 365}[match["unit"].lower().rstrip("s")]
    return (today - days * DAY, today) if 0 < days <= 3660 else None


@relative
def _about_ago(match: re.Match[str], today: dt.date) -> Resolved:
    """a couple of / a few / several days|weeks|months ago: a count said loosely (a couple is
    2, a few 3), so a unit either side of it."""
    n, unit = _count(match["n"]), match["unit"].lower().rstrip("s")
    if unit == "day":
        return today - (n + 1) * DAY, today - (n - 1) * DAY
    if unit == "week":
        return week_of(today - 7 * (n + 1) * DAY)[0], week_of(today - 7 * (n - 1) * DAY)[1]
    return (month_range(*shift_months(today, -(n + 1)))[0],
            month_range(*shift_months(today, -(n - 1)))[1])


@relative
def _weekday_of_week(match: re.Match[str], today: dt.date) -> Resolved:
    """Tuesday of last week, last week's Tuesday, this week on Monday."""
    back = 0 if match["which"].lower() == "this" else 1
    day = week_of(today)[0] + (_WEEKDAYS.index(match["wd"].lower()) - 7 * back) * DAY
    return day, day


@relative
def _weekday(match: re.Match[str], today: dt.date) -> Resolved:
    target = _WEEKDAYS.index(match["wd"].lower())
    if (match["which"] or "").lower() == "this":
        day = week_of(today)[0] + target * DAY
    else:  # "last Friday", "on Friday": the most recent one before today
        day = most_recent_weekday(today, target)
    return day, day


@relative
def _weekend(match: re.Match[str], today: dt.date) -> Resolved:
    which = (match["which"] or "").lower()
    this_week = week_of(today)[0]
    if which == "this" or (which in ("", "the") and today.weekday() >= 5):
        monday = this_week
    else:
        monday = this_week - 7 * DAY
    return monday + 5 * DAY, monday + 6 * DAY


# -- the forms ------------------------------------------------------------------------------------

_I = re.IGNORECASE
_FORMS: tuple[Form, ...] = (
    # "Monday the 27th of March 2023", "27 March 2023", "27th of March"
    (re.compile(rf"\b(?:{WEEKDAY_WORD},?\s+(?:the\s+)?)?(?:the\s+)?{_DAYNUM}\s+(?:of\s+)?{_MONTH}"
                rf"(?:(?:,\s*|\s+)(?P<year>{_YEAR}))?(?![a-z])", _I), _words),
    # "March 27, 2023", "Monday, May 8th 2023", "Mar 27 2023", "July 3rd"
    (re.compile(rf"\b(?:{WEEKDAY_WORD},?\s+)?{_MONTH}\s+(?:the\s+)?{_DAYNUM}"
                rf"(?:(?:,\s*|\s+)(?P<year>{_YEAR}))?(?![a-z])", _I), _words),
    # 8-May-2023, 08-May-23
    (re.compile(rf"\b(?P<d>3[01]|[12]\d|0?[1-9])-(?P<mon>{_MONTH})-(?P<year>(?:19|20)?\d\d)"
                r"(?![\d-])", _I), _named_day),
    # "the eighth of May 2023", "May twenty-seventh, 2023" ("May" only capitalised: "we may
    # first ..." is no date)
    (re.compile(rf"\b(?:(?i:{WEEKDAY_WORD}),?\s+)?(?i:the\s+)?(?P<d>{_ORDINAL})\s+(?i:of\s+)?"
                rf"(?P<mon>{_MONTH_FULL})(?:(?:,\s*|\s+)(?P<year>{_YEAR}))?(?![a-z])"),
     _named_day),
    (re.compile(rf"\b(?:(?i:{WEEKDAY_WORD}),?\s+)?(?P<mon>{_MONTH_FULL})\s+(?i:the\s+)?"
                rf"(?P<d>{_ORDINAL})(?:(?:,\s*|\s+)(?P<year>{_YEAR}))?(?![a-z])"), _named_day),
    # "March 27-29, 2023", "Mar 1 to 10", "27-29 March 2023", "the 1st to the 10th of March"
    (re.compile(rf"\b(?P<mon>{_MONTH})\s+(?:the\s+)?(?P<d1>{_DAYNUM}){_TO}(?P<d2>{_DAYNUM})"
                rf"(?:(?:,\s*|\s+)(?P<year>{_YEAR}))?(?![a-z])", _I), _day_range),
    (re.compile(rf"\b(?:the\s+)?(?P<d1>{_DAYNUM}){_TO}(?P<d2>{_DAYNUM})\s+(?:of\s+)?"
                rf"(?P<mon>{_MONTH})(?:(?:,\s*|\s+)(?P<year>{_YEAR}))?(?![a-z])", _I), _day_range),
    # "on the 27th" (an ordinal the sentence ends on, or a comma: "the 3rd floor" is no date)
    (re.compile(r"\bon\s+the\s+(?P<d>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)\b(?!\s*[a-z0-9])",
                _I), _day_of_month),
    # "March 2023", "Sept. 2023", "July '26"
    (re.compile(rf"\b{_MONTH},?\s+(?P<year>{_YEAR})", _I), _words),
    # "in March", "during May" (a month without its year needs the preposition: "may" is a verb)
    (re.compile(rf"(?i:\b(?:in|during|throughout|since|early|late|mid-?)\s*)(?P<m>{_MONTH_FULL})"
                r"\b(?!,?\s*(?:19|20)\d\d)"), _month_word),
    # "three days ago", "2 weeks ago", "a month ago"
    (re.compile(rf"\b{_NUMBER_WORD}\s+{_UNIT}\s+ago\b", _I), _ago),
    # ISO 2023-03-27 (also 2023/03/27, 2023.03.27)
    (re.compile(r"(?<![\d./-])(?P<y>\d{4})([-/.])(?P<m>\d{1,2})\2(?P<d>\d{1,2})(?![\d]|[./-]\d)"),
     _iso),
    # 20230327, as in file names
    (re.compile(r"(?<![\d./-])(?P<y>(?:19|20)\d\d)(?P<m>0[1-9]|1[0-2])(?P<d>[0-2]\d|3[01])"
                r"(?![\d]|[./-]\d)"), _iso),
    # ISO month 2023-03
    (re.compile(r"(?<![\d./-])(?P<y>\d{4})-(?P<m>\d{2})(?![\d]|[./-]\d)"), _iso_month),
    # 3/27/2023, 27/3/2023, 3-27-2023, 27.03.2023
    (re.compile(r"(?<![\d./-])(?P<a>\d{1,2})(?P<sep>[/.-])(?P<b>\d{1,2})(?P=sep)"
                r"(?P<y>\d{4}|\d{2})(?![\d]|[./-]\d)"), _numeric),
    # on 3/27 (a fraction without its preposition)
    (re.compile(r"\bon\s+(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\d/])", _I), _month_day),
    # in 2023, during 2023, from 2023
    (re.compile(r"\b(?:in|during|throughout|since|from|of)\s+(?P<y>(?:19|20)\d\d)(?!\d|[:.-]\d)",
                _I), _year),
    (re.compile(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b", _I), offset(0)),
    (re.compile(r"\b(?:yesterday|last\s+night)\b", _I), offset(1)),
    (re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b", _I), offset(2)),
    (re.compile(r"\b(?:the\s+)?(?P<which>last|past|previous|this|current)\s+(?P<unit>week|month"
                r"|year)(?P<before>\s+before\s+last)?\b", _I), _relative_unit),
    (re.compile(r"\bthe\s+(?P<which>)(?P<unit>week)(?P<before>\s+before\s+last)\b", _I),
     _relative_unit),
    (re.compile(rf"\b(?:the\s+)?(?:past|last)\s+(?P<n>{_COUNT})\s+(?P<unit>days?|weeks?"
                r"|months?|years?)\b", _I), _past_n),
    (re.compile(r"\b(?P<n>(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|several)\s+(?P<unit>days?"
                r"|weeks?|months?)\s+ago\b", _I), _about_ago),
    (re.compile(rf"\b(?:on\s+)?(?P<wd>{'|'.join(_WEEKDAYS)})\s+(?:of\s+)?(?P<which>last|this"
                r"|previous)\s+week\b", _I), _weekday_of_week),
    (re.compile(rf"\b(?P<which>last|this|previous)\s+week(?:'s|\s+on)?\s+"
                rf"(?P<wd>{'|'.join(_WEEKDAYS)})\b", _I), _weekday_of_week),
    (re.compile(rf"\b(?:(?P<which>last|this|past|on)\s+)?(?P<wd>{'|'.join(_WEEKDAYS)})\b", _I),
     _weekday),
    (re.compile(r"\b(?:(?P<which>last|this|past|the)\s+)?weekend\b", _I), _weekend),
)


def find_spans(query: str, today: dt.date) -> Iterator[Span]:
    """Every date phrase some form resolves (overlapping ones included)."""
    for pattern, resolve in (*_FORMS, *CN_FORMS, *PERIOD_FORMS):
        for match in pattern.finditer(query):
            resolved = resolve(match, today)
            if resolved is None:
                continue
            first, last = resolved[0], resolved[1]
            given = resolved[2] if len(resolved) == 3 else True
            yield Span(match.start(), match.end(), first, last, given, resolve in RELATIVE)
