"""The ways a query names a day, a month, a year or a week, each a pattern and a resolver.

`find_spans(query, today)` returns every date phrase a form resolves (below: days, months and
years named in words; dates in digits in `numeric.py`; those counted from today in
`relative.py`; Chinese ones in
`chinese.py`; quarters, halves and a month's weeks in `periods.py`; holidays in
`holidays.py`) as `Span`s (where it stands, the first and last day it means);
`search/dates/query.py` picks among them and narrows one to the part asked for ("early March").

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
("a couple of days ago": 2, "a few weeks ago": 3) is a unit either side of it; early, mid and
late March (三月初, 中旬, 下旬) are its days 1-10, 11-20 and 21 to its end, the beginning and
the end of a year its first and last four months, a half of a month days 1-15 and 16 on
(`arithmetic.part_of`).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass

from openmemd.search.dates.arithmetic import (
    MAX_YEAR,
    MIN_YEAR,
    MONTH_NAME,
    RELATIVE,
    TOPICAL,
    WEEKDAY_WORD,
    WEEKDAYS,
    Form,
    Resolved,
    full_year,
    latest_day_of_month,
    latest_not_after,
    month_number,
    month_range,
    one_day,
    relative,
    week_of,
    weekday_number,
    year_range,
    ymd,
)
from openmemd.search.dates.chinese import CN_FORMS
from openmemd.search.dates.holidays import HOLIDAY_FORMS
from openmemd.search.dates.numeric import NUMERIC_FORMS
from openmemd.search.dates.periods import PERIOD_FORMS
from openmemd.search.dates.relative import RELATIVE_FORMS
from openmemd.search.dates.seasons import NORTHERN_FORMS, SOUTHERN_FORMS


@dataclass(frozen=True)
class Span:
    """A date phrase of the query: characters [start, end), meaning days first..last."""

    start: int
    end: int
    first: dt.date
    last: dt.date
    year_given: bool = True  # False for "July 3rd": a range's other end may lend its year
    relative: bool = False  # counted from today ("last week"), not named ("May 8th 2023")
    topical: bool = False  # a date only when nothing else is asked (`arithmetic.topical`)
    # The named day a counted phrase counts from ("August 11, 2023" of "two weeks before August
    # 11, 2023"; search/dates/offsets.py), None for any other phrase
    counted_from: Span | None = None


# -- English words, parsed by dateparser ----------------------------------------------------------

_MONTH = rf"{MONTH_NAME}\.?"
# Full names for a month without a day or year ("in March"); "may" only as "May" (a verb too).
_MONTH_FULL = (r"(?:(?i:january|february|march|april|june|july|august|september|october"
               r"|november|december)|May)")
# not "March 3:30", but "May 8: what happened"
_DAYNUM = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?(?!\d|:\d)"
_YEAR = r"(?:(?:19|20)\d\d(?!\d|[:.]\d)|'\d\d(?!\d))"
_ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
                  "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth",
                  "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth",
                  "twentieth")
_ORDINALS = {w: i for i, w in enumerate(_ORDINAL_WORDS, 1)} | {
    f"{tens}{sep}{w}": base + i for tens, base in (("twenty", 20), ("thirty", 30))
    for sep in ("-", " ", "") for i, w in enumerate(_ORDINAL_WORDS[:9], 1)} | {"thirtieth": 30}
_ORDINAL = "(?i:" + "|".join(sorted(map(re.escape, _ORDINALS), key=len, reverse=True)) + ")"
# A part of a month before its name ("early March", "the end of June"), or the weekday counted
# in it ("the first Monday of May", search/dates/offsets.py; not any "of"), looked behind at,
# each a whole word: "a friend of June" is no "end of June", "chocolate May" no "late May"
_A_PART_BEHIND = "(?i:" + "|".join(f"(?<={w})" for w in (
    r"\bearly\s", r"\blate\s", r"\bmid-", r"\bmid\s", r"\bmid", r"\bmiddle\sof\s",
    r"\bend\sof\s", r"\bstart\sof\s", r"\bbeginning\sof\s", r"\bhalf\sof\s",
    *(rf"\b{day}\s(?:of|in)\s" for day in WEEKDAYS))) + ")"
# What runs from one day of a month to another: "27-29", "1 to 10", "27th through the 29th".
_TO = r"\s*(?:-|–|—|to|through|thru|until|till)\s*(?:the\s+)?"
# Days of one month: "May 8th and 9th", "the 8th or 9th of May", "May 8, 9 and 10" (read as the
# days from the first to the last). After the month, the last number needs its suffix or the
# phrase's end: "May 8 and 10 people came" counts people. A month's 31 days at most: from each
# number of a longer run ("9, 9, 9, ...") the pattern would read to its end, the square of its
# length.
_AND = rf"(?:,\s*(?:the\s+)?{_DAYNUM}){{0,29}},?\s+(?:and|or|&)\s+(?:the\s+)?"
_SECOND_DAY = (r"(?:(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)(?![a-z0-9])"
               r"|(?:3[01]|[12]\d|0?[1-9])(?=\s*(?:[,.?!;)]|$|,?\s*(?:19|20)\d\d)))")
# (what leads, what joins the two days, what the second day after a month may be)
_DAY_TO = (("", _TO, _DAYNUM), (r"between\s+", r"\s+and\s+(?:the\s+)?", _DAYNUM),
           ("", _AND, _SECOND_DAY))


@functools.lru_cache(maxsize=512)  # a phrase said again in a query is read once
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


_WEEKDAY_FIRST = re.compile(rf"^{WEEKDAY_WORD}(?![a-z])", re.IGNORECASE)


def _words(match: re.Match[str], today: dt.date) -> Resolved:  # "July '26": dateparser's 26th
    text = match.group()
    two_digits = match.groupdict().get("yy")
    if two_digits:  # "8th May 23"
        text = text[:match.start("yy") - match.start()] + str(full_year(two_digits))
    # dateparser knows "Thu" and "Tues" but not "Thurs": a weekday goes to it by its full name
    text = _WEEKDAY_FIRST.sub(lambda m: WEEKDAYS[weekday_number(m[0])], text)
    found = parse_words(re.sub(r"'(\d\d)(?!\d)", lambda m: str(full_year(m[1])), text), today)
    if found is None or not MIN_YEAR <= found[0].year <= MAX_YEAR:
        return None
    first, last = _period_range(*found)
    return first, last, match.groupdict().get("year") is not None or two_digits is not None


def _month_word(match: re.Match[str], today: dt.date) -> Resolved:
    """in March: the month's name alone (dateparser reads no "mid-" or "in")."""
    found = parse_words(match["m"], today)
    return None if found is None else (*month_range(found[0].year, found[0].month), False)


def _months(match: re.Match[str], today: dt.date) -> Resolved:
    """from October to March, between March and May: the latest end month begun by today, from
    the latest start month not after it (in December, "October to March" is October of last
    year to this March)."""
    start, end = month_number(match["m1"]), month_number(match["m2"])
    end_year = today.year if end <= today.month else today.year - 1
    start_year = end_year if start <= end else end_year - 1
    return month_range(start_year, start)[0], month_range(end_year, end)[1], False


def _years(match: re.Match[str], today: dt.date) -> Resolved:
    """from 2021 to 2023, between 2021 and 2023."""
    first, last = sorted((int(match["y1"]), int(match["y2"])))
    return year_range(first)[0], year_range(last)[1]


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
        return one_day(ymd(full_year(match["year"]), month, day))
    found = latest_not_after(today, month, day)
    return None if found is None else (found, found, False)


def _number(text: str) -> int:
    return int(re.sub(r"\D", "", text))


@relative
def _day_of_month(match: re.Match[str], today: dt.date) -> Resolved:
    """on the 27th, on the eighth: the latest such day not after today."""
    return one_day(latest_day_of_month(today, _ORDINALS.get(match["d"].lower())
                                       or _number(match["d"])))


@relative
def _weekday_of_month(match: re.Match[str], today: dt.date) -> Resolved:
    """"Friday the 9th": the latest 9th not after today that fell on a Friday."""
    return one_day(latest_day_of_month(today, _number(match["d"]), weekday_number(match["wd"])))


# -- the forms ------------------------------------------------------------------------------------

_I = re.IGNORECASE
_FORMS: tuple[Form, ...] = (
    # "Monday the 27th of March 2023", "27 March 2023", "27th of March", "the 27th day of March",
    # "8th May 23" (two digits after the month are its year only where the phrase ends: "8 May
    # 23 people came" counts people)
    (re.compile(rf"\b(?:{WEEKDAY_WORD},?\s+(?:the\s+)?)?(?:the\s+)?{_DAYNUM}\s+"
                rf"(?:(?:day\s+)?of\s+)?{_MONTH}(?:(?:,\s*|\s+)(?:(?P<year>{_YEAR})"
                rf"|(?P<yy>\d\d)(?=\s*(?:[,.?!;()]|$))))?(?![a-z])", _I), _words),
    # "March 27, 2023", "Monday, May 8th 2023", "Mar 27 2023", "July 3rd"
    (re.compile(rf"\b(?:{WEEKDAY_WORD},?\s+)?{_MONTH}\s+(?:the\s+)?{_DAYNUM}"
                rf"(?:(?:,\s*|\s+)(?P<year>{_YEAR}))?(?![a-z])", _I), _words),
    # 8-May-2023, 08-May-23, 8/May/2023, 8.May.2023 (one separator, the same both sides)
    (re.compile(rf"\b(?P<d>3[01]|[12]\d|0?[1-9])(?P<sep>[-/.])(?P<mon>{_MONTH})(?P=sep)"
                r"(?P<year>(?:19|20)?\d\d)(?![\d/-]|\.\d)", _I), _named_day),
    # "2023 May 8", "2023, May 8th": the year first, as in a log
    (re.compile(rf"\b(?P<year>(?:19|20)\d\d),?\s+(?P<mon>{_MONTH})\s+(?:the\s+)?(?P<d>{_DAYNUM})"
                r"(?![a-z])", _I), _named_day),
    # "the eighth of May 2023", "May twenty-seventh, 2023" ("May" only capitalised, or "may"
    # with its year: "we may first ..." is no date)
    (re.compile(rf"\b(?:(?i:{WEEKDAY_WORD}),?\s+)?(?i:the\s+)?(?P<d>{_ORDINAL})\s+(?i:(?:day\s+)?of\s+)?"
                rf"(?P<mon>{_MONTH_FULL}|(?i:may)(?=,?\s+{_YEAR}))"
                rf"(?:(?:,\s*|\s+)(?P<year>{_YEAR}))?(?![a-z])"), _named_day),
    (re.compile(rf"\b(?:(?i:{WEEKDAY_WORD}),?\s+)?(?P<mon>{_MONTH_FULL})\s+(?i:the\s+)?"
                rf"(?P<d>{_ORDINAL})(?:(?:,\s*|\s+)(?P<year>{_YEAR}))?(?![a-z])"), _named_day),
    # "March 27-29, 2023", "Mar 1 to 10", "27-29 March 2023", "the 1st to the 10th of March",
    # "between 8 and 10 May 2023"; "May 8th and 9th", "the 8th or 9th of May" (`_AND`)
    *((re.compile(rf"\b{lead}(?P<mon>{_MONTH})\s+(?:the\s+)?(?P<d1>{_DAYNUM}){to}"
                  rf"(?P<d2>{second})(?:(?:,\s*|\s+)(?P<year>{_YEAR}))?(?![a-z])", _I), _day_range)
      for lead, to, second in _DAY_TO),
    *((re.compile(rf"\b{lead}(?:the\s+)?(?P<d1>{_DAYNUM}){to}(?P<d2>{_DAYNUM})\s+(?:of\s+)?"
                  rf"(?P<mon>{_MONTH})(?:(?:,\s*|\s+)(?P<year>{_YEAR}))?(?![a-z])", _I),
       _day_range) for lead, to, _second in _DAY_TO),
    # "Friday the 9th", "on Monday, the 8th", "Fri 9th" (not "Friday the 9th of June": the
    # forms above read it whole; nor "Monday the 3rd floor")
    (re.compile(rf"\b(?P<wd>{WEEKDAY_WORD}),?\s+(?:the\s+)?(?P<d>3[01]|[12]\d|0?[1-9])"
                rf"(?:st|nd|rd|th)\b(?!\s*(?:of\b|{_MONTH}\b|[a-z0-9]))", _I), _weekday_of_month),
    # "on the 27th", "from the 15th" (an ordinal the sentence ends on, or a comma: "the 3rd
    # floor" is no date)
    (re.compile(r"\b(?:on|from|since)\s+the\s+(?P<d>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)\b(?!\s*[a-z0-9])",
                _I), _day_of_month),
    # "on the eighth" (in words only after "on": "from the first" is a manner of speaking)
    (re.compile(rf"\bon\s+the\s+(?P<d>{_ORDINAL})\b(?!\s*[a-z0-9-])", _I), _day_of_month),
    # "March 2023", "Sept. 2023", "July '26"
    (re.compile(rf"\b{_MONTH},?\s+(?P<year>{_YEAR})", _I), _words),
    # "in March", "from May" (a month without its year needs the preposition: "may" is a verb;
    # or the part of it asked for: "early March", "the end of June", which query.py reads)
    (re.compile(rf"(?:(?i:\b(?:in|during|throughout|since|from|between)\s*)|{_A_PART_BEHIND})"
                rf"(?P<m>{_MONTH_FULL})\b(?!,?\s*(?:19|20)\d\d|\s+(?:the\s+)?\d)"), _month_word),
    # "from October to March", "between March and May" (the second month has no "in" of its own)
    (re.compile(rf"(?i:\b(?:from|between)\s+)(?P<m1>{_MONTH_FULL})(?i:\s*(?:-|–|to|until|till"
                rf"|through|and)\s+)(?P<m2>{_MONTH_FULL})\b(?!,?\s*(?:19|20)\d\d)"), _months),
    (re.compile(r"\b(?:from|between)\s+(?P<y1>(?:19|20)\d\d)\s*(?:-|–|to|until|till|through"
                r"|and)\s*(?P<y2>(?:19|20)\d\d)(?!\d|[:.-]\d)", _I), _years),
    # a year in brackets, "(2023)", lends itself to the day before it: "May 8 (2023)"
    (re.compile(r"(?<=[(（])\s*(?P<y>(?:19|20)\d\d)(?=\s*[)）])"), _year),
    # in 2023, during 2023, from 2023, early 2023, in the year 2023
    (re.compile(rf"(?:\b(?:in|during|throughout|since|from|of)\s+(?:the\s+year\s+)?"
                rf"|{_A_PART_BEHIND})(?P<y>(?:19|20)\d\d)(?!\d|[:.-]\d)", _I), _year),
)


# A person's question names a handful of dates, each matched by one to three forms ("Monday,
# May 8th 2023" whole, "Monday", "May 8th"): the first MAX_READINGS matches are read (each may
# cost a dateparser call) and the rest of the query is left as words, so that a query's reading
# costs what its length does, however many dates it holds (issue 43: 4 KB of "Jan 1 ").
MAX_READINGS = 32


@dataclass(frozen=True)
class Found:
    """What the forms read in `query[:until]`: every date phrase some form resolves (overlapping
    ones included); `until` is the query's length unless MAX_READINGS cut the reading short."""

    spans: list[Span]
    until: int


def find_spans(query: str, today: dt.date, *, southern: bool = False) -> Found:
    """The date phrases of `query` (up to MAX_READINGS matches); `southern`: the user's seasons
    are the southern hemisphere's."""
    seasons = SOUTHERN_FORMS if southern else NORTHERN_FORMS
    matches = [(match, resolve) for pattern, resolve in (
        *_FORMS, *NUMERIC_FORMS, *RELATIVE_FORMS, *CN_FORMS, *PERIOD_FORMS, *HOLIDAY_FORMS,
        *seasons) for match in pattern.finditer(query)]
    starts = sorted(match.start() for match, _ in matches)
    # every match at one place is read, or none: the cut falls before a start
    until = starts[MAX_READINGS] if len(starts) > MAX_READINGS else len(query)
    spans = []
    for match, resolve in matches:
        resolved = resolve(match, today) if match.start() < until else None
        if resolved is not None:
            given = resolved[2] if len(resolved) == 3 else True
            spans.append(Span(match.start(), match.end(), resolved[0], resolved[1], given,
                              resolve in RELATIVE, resolve in TOPICAL))
    return Found(spans, until)
