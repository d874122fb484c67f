"""Days counted from a day or month the query names: "the day after May 7, 2023", "two days
before 8 May", "the week after March 27", "the Monday after May 1" (the first one after it),
"the weekend of May 6th 2023", "the first Monday of May 2023", "the last Friday in March".

The phrase and the day it counts from are one date phrase: "what happened the day after May 7,
2023" asks for May 8th alone, and its words are no topic. With a topic asked too, the named day
is searched as well (`Span.counted_from`, search/dates/query.py): in a log of what was said each
day, "the puppy she got two weeks before August 11, 2023" was told on August 11th. A week
counted from a day is the seven days next to it ("the week after March 27": March 28 to April
3; "two weeks before": the seven days ending a week before that), not a calendar week; "the
weekend of" a day is the Saturday and Sunday of its week ("the weekend of May 6-7" those
days), "the weekend after" or "before" it the nearest one on that side, and "the 4th of July
weekend" the day with the Saturday and Sunday beside it (`arithmetic.weekend_around`; a
holiday's name is read so in holidays.py). An ordinal weekday of a month is
counted in that month ("the last Friday of March 2025": March 28th).

A relative phrase the counted phrase holds ("the weekend" in "the weekend of May 6th", "Monday"
in "the first Monday of May") was read alone as a day of this week: it goes with the phrase.
"the weekend before April 10" and "last weekend before April 10" differ: the first is counted
here, the second is "last weekend" as of that day (`search/dates/query.py`'s anchor), and keeps the
day it was said on.
"""

from __future__ import annotations

import datetime as dt
import re

from openmemd.search.dates.arithmetic import (
    DAY,
    WEEKDAYS,
    count_of,
    month_range,
    nth_weekday,
    week_of,
    weekend_around,
    ymd,
)
from openmemd.search.dates.forms import Span
from openmemd.search.dates.spans import words_before

# "the day after", "two days before", "a week following", "the weekend of" (then the day)
_FROM_DAY = re.compile(r"\b(?P<n>the|an?|one|two|three|four|five|six|seven|eight|nine|ten"
                       rf"|\d{{1,2}})\s+(?P<unit>days?|weeks?|weekend|{'|'.join(WEEKDAYS)})\s+"
                       r"(?P<dir>after|following|before|prior\s+to|of)\s+(?:the\s+)?$",
                       re.IGNORECASE)
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
             "4th": 4, "fifth": 5, "5th": 5, "last": -1, "final": -1}
# "the 4th of July weekend", "the May 6 long weekend" (after the day)
_WEEKEND_AFTER = re.compile(r"\s+(?:long\s+)?weekend(?:,?\s+(?:(?:of|in)\s+)?"
                            r"(?P<year>(?:19|20)\d\d)(?!\d))?\b", re.IGNORECASE)
# "the first Monday of", "the last Friday in" (then the month; "in March" may be its span)
_OF_MONTH = re.compile(rf"\b(?:the\s+)?(?P<ord>{'|'.join(_ORDINALS)})\s+"
                       rf"(?P<wd>{'|'.join(WEEKDAYS)})(?:\s+(?:of|in))?\s+$", re.IGNORECASE)


def counted_from_named(query: str, spans: list[Span], today: dt.date) -> list[Span]:
    """`spans` with each day or month a counting phrase leads to replaced by the days it
    counts to, the phrase taken with it (and any relative span inside the phrase dropped). A
    month said without its year whose counted day lies after today is last year's ("the last
    Friday in March", asked on March 10th)."""
    out: list[Span] = []
    for s in spans:
        if out and s.start < out[-1].end:
            continue  # "weekend" or "2022" of "July 4th weekend 2022", taken with the day
        short = (s.last - s.first).days <= 2  # a day, or days a weekend may be ("May 6-7")
        counted = _from_day(s, words_before(_FROM_DAY, query, s.start)) if short else None
        weekend = _WEEKEND_AFTER.match(query, s.end)
        if counted is None and short and not s.relative and weekend:
            first: dt.date | None = s.first
            if weekend["year"] and not s.year_given:  # "July 4th weekend 2022"
                first = ymd(int(weekend["year"]), s.first.month, s.first.day)
            if first is not None:
                out.append(Span(s.start, weekend.end(),
                                *weekend_around(first, first + (s.last - s.first)),
                                s.year_given or bool(weekend["year"])))
                continue
        if counted is None and _whole_month(s):
            counted = _of_month(s, words_before(_OF_MONTH, query, s.start), today)
        if counted is None:
            out.append(s)
            continue
        start, (first, last) = counted
        while out and out[-1].start >= start:  # "the weekend" of "the weekend of May 6th"
            out.pop()
        # a day counted from (not a weekday found in its month) may be the day it was told
        told = s if s.first == s.last else None
        out.append(Span(start, s.end, first, last, s.year_given, s.relative, counted_from=told))
    return out


def _from_day(s: Span, match: re.Match[str] | None) -> tuple[int, tuple[dt.date, dt.date]] | None:
    if match is None:
        return None
    n_text, unit, way = match["n"].lower(), match["unit"].lower(), match["dir"].lower()
    n = 1 if n_text == "the" else count_of(n_text)
    day = s.first
    after = way in ("after", "following")
    if unit == "weekend" and way == "of" and s.first != s.last:
        return match.start(), (s.first, s.last)  # "the weekend of May 6-7": those days
    if s.first != s.last:
        return None
    if unit == "weekend":
        if n_text != "the":
            return None
        if way == "of":
            saturday = week_of(day)[0] + 5 * DAY
        elif after:
            saturday = _nearest(day, 5, after=True)
        else:  # the nearest Sunday before the day, and its Saturday
            saturday = _nearest(day, 6, after=False) - DAY
        return match.start(), (saturday, saturday + DAY)
    if unit in WEEKDAYS:  # "the Monday after May 1": the first one after it
        if n_text != "the" or way == "of":
            return None
        shifted = _nearest(day, WEEKDAYS.index(unit), after=after)
        return match.start(), (shifted, shifted)
    if way == "of" or not 1 <= n <= 60:
        return None  # "the day of May 8" is May 8; "the week of": search/dates/query.py
    if unit.startswith("day"):
        shifted = day + n * DAY if after else day - n * DAY
        return match.start(), (shifted, shifted)
    if after:
        return match.start(), (day + (7 * (n - 1) + 1) * DAY, day + 7 * n * DAY)
    return match.start(), (day - 7 * n * DAY, day - (7 * (n - 1) + 1) * DAY)


def _nearest(day: dt.date, weekday: int, *, after: bool) -> dt.date:
    """The first `weekday` (0 = Monday) after `day`, or the last before it, never `day` itself."""
    if after:
        return day + ((weekday - day.weekday()) % 7 or 7) * DAY
    return day - ((day.weekday() - weekday) % 7 or 7) * DAY


def _whole_month(s: Span) -> bool:
    return s.first.day == 1 and (s.first, s.last) == month_range(s.first.year, s.first.month)


def _of_month(s: Span, match: re.Match[str] | None,
              today: dt.date) -> tuple[int, tuple[dt.date, dt.date]] | None:
    if match is None:
        return None
    nth, weekday = _ORDINALS[match["ord"].lower()], WEEKDAYS.index(match["wd"].lower())
    day = nth_weekday(s.first.year, s.first.month, nth, weekday)
    if day is not None and day > today and not s.year_given and not s.relative:
        day = nth_weekday(s.first.year - 1, s.first.month, nth, weekday)
    return None if day is None else (match.start(), (day, day))
