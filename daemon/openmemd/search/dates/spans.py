"""How the date phrases a query names combine (`search/dates/query.py` finds them, `forms.py`
reads each): "March 3 to March 10, 2023" is one range, "May 8th of 2023" one day of that year,
"Monday (May 8, 2023)" one day, "early March" a part of March, "since March" March to today,
"the week of March 27" that week. Each function takes the query, its spans in query order and
returns them combined.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

from openmemd.search.dates.arithmetic import (
    PART_WORD,
    WEEKDAY_WORD,
    part_index,
    part_of,
    week_of,
    year_range,
)
from openmemd.search.dates.forms import Span
from openmemd.search.dates.numeric import weekday_reading

_SINCE_BEFORE = re.compile(r"(?:\bsince|自从?)\s*$", re.IGNORECASE)
# 年初到现在, 本月至今, 这周到目前为止, 今年以来
_UNTIL_NOW = re.compile(r"\s*(?:(?:到|至|直到)\s*(?:现在|今天|目前(?:为止)?|如今|今)|以来)")
_SINCE_IN = re.compile(r"since\b", re.IGNORECASE)
# "the week of March 27, 2023", "3月27日那周": the week (Monday to Sunday) holding the day.
_WEEK_BEFORE = re.compile(r"\b(?:the\s+)?week\s+of\s+(?:the\s+)?$", re.IGNORECASE)
_WEEK_AFTER = re.compile(r"\s*(?:所在的)?(?:那一?周|那一?週|那个星期|那个礼拜)")
# The part of a period asked for: "early March", "the end of last month", "the first half of
# November" (before it); 三月初, 上个月底, 去年年底 (after it).
_PART_BEFORE = re.compile(rf"\b(?:(?:the\s+)?(?:very\s+)?{PART_WORD}\s+of\s+(?:the\s+)?"
                          r"|(?P<near>early|late|mid|middle)[\s-]*)$", re.IGNORECASE)
_PART_AFTER_CJK = re.compile(r"\s*的?[年月]?(?P<part>初|上旬|中旬|下旬|底|末)")
_OF = re.compile(r"of\s+", re.IGNORECASE)  # "the end of 2025": the year's form takes its "of"
# "from X to Y", "between X and Y", "X - Y", "X至Y": one range from X's start to Y's end
# ("X and Y" without "between" names two days, not the days between them).
_JOIN = re.compile(r"^\s*(?:-|–|—|~|to|until|till|through|thru|至|到)\s*$", re.IGNORECASE)
_BESIDE = re.compile(r"^[\s,，、(（)）]*$")
_WEEKDAY = re.compile(rf"(?:on\s+)?{WEEKDAY_WORD}|(?:星期|周|週|礼拜|禮拜)[一二三四五六日天]",
                      re.IGNORECASE)
_AND = re.compile(r"^\s*and\s*$", re.IGNORECASE)
# "May 8th of 2023", "May 8 (2023)", "5月8日（2023年）", "五月八日，2023年", "5月8日 2023年": the
# year is the day's
_OF_YEAR = re.compile(r"\s*,?\s*(?:(?:of|in)\s+(?:the\s+year\s+)?|[(（]\s*)(?:19|20)\d\d(?:\s*年)?"
                      r"|\s*[,，]?\s*(?:19|20)\d\d\s*年", re.IGNORECASE)
_YEAR_THEN_DAY = re.compile(r"\s*,?\s*(?:on|in|around)?\s*", re.IGNORECASE)  # "last year on"
_YEARS_DAY = re.compile(r"\s*的\s*")  # 2023年的5月8日: the day of that year
_OF_RELATIVE_YEAR = re.compile(r"\s*,?\s*(?:of\s+|in\s+)?", re.IGNORECASE)  # "May 8 last year"
_BETWEEN = re.compile(r"\bbetween\s+$", re.IGNORECASE)
_WEEK = dt.timedelta(days=7)
_CLOSING = {closing: re.compile(rf"\s*{re.escape(closing)}") for closing in ")）"}
# How far before a date the words leading to it ("the end of", "since", "the week of", "two
# days before") are looked for. Searching the whole text before each date instead made reading
# a query quadratic in its length (issue 43): 4 KB of "Jan 1 " took seconds.
LOOK_BEHIND = 256


def words_before(pattern: re.Pattern[str], query: str, at: int) -> re.Match[str] | None:
    """`pattern` (ending in `$`) searched in the text before `at`, as `pattern.search(query[:at])`
    would for a match within LOOK_BEHIND characters of `at` (word boundaries and lookbehinds
    still see the characters before the window); positions are the query's."""
    return pattern.search(query, max(0, at - LOOK_BEHIND), at)


def beside_named(query: str, spans: list[Span]) -> list[Span]:
    """A weekday said beside the date it names ("Monday (May 8, 2023)", "周一，3月27日") is part
    of that date, not a day of this week."""
    out: list[Span] = []
    for span in spans:
        prev = out[-1] if out else None
        if prev is not None and _BESIDE.match(query[prev.end:span.start]) and (
                _weekday_beside(query, prev, span) or _weekday_beside(query, span, prev)):
            named, said = (span, prev) if prev.relative else (prev, span)
            day = weekday_reading(query[named.start:named.end], named.first,
                                  said.first.weekday())  # "Monday 05.08.2023": May 8th
            out[-1] = Span(prev.start, span.end, day, day, named.year_given)
        else:
            out.append(span)
    return out


def _weekday_beside(query: str, weekday: Span, named: Span) -> bool:
    return (weekday.relative and not named.relative and named.first == named.last
            and bool(_WEEKDAY.fullmatch(query[weekday.start:weekday.end].strip())))


def joined(query: str, spans: list[Span], today: dt.date) -> list[Span]:
    """"March 3 to March 10, 2023" / "从3月1日到3月5日": one range. A side without a year
    takes the other's ("March 3" of "March 3 to March 10, 2023" is in 2023), and a range runs
    forward from its start (`_forward`)."""
    out: list[Span] = []
    for span in spans:
        prev = out[-1] if out else None
        gap = query[prev.end:span.start] if prev is not None else ""
        if (prev is not None and not prev.year_given
                and (_OF_YEAR.fullmatch(query, prev.end, span.end)
                     or (span.relative and _OF_RELATIVE_YEAR.fullmatch(gap)))
                and (span.first, span.last) == year_range(span.first.year)):
            # "May 8th of 2023", "March 3 in 2023", "May 8 last year": the year is the day's
            prev = _in_year(prev, span.first.year)
            out[-1] = Span(prev.start, span.end, prev.first, prev.last)
        elif (prev is not None and not span.year_given
              and ((prev.relative and _YEAR_THEN_DAY.fullmatch(gap)) or _YEARS_DAY.fullmatch(gap))
              and (prev.first, prev.last) == year_range(prev.first.year)):
            # "last year on May 8", "this year in March", 2023年的5月8日: the day of that year
            span = _in_year(span, prev.first.year)
            out[-1] = Span(prev.start, span.end, span.first, span.last)
        elif prev is not None and (_JOIN.match(gap) or (
                _AND.match(gap) and words_before(_BETWEEN, query, prev.start))):
            if not prev.year_given and span.year_given:
                prev = _in_year(prev, span.first.year)
                if prev.first > span.last:  # "December to March 2023": December 2022
                    prev = _in_year(prev, span.first.year - 1)
            elif prev.year_given and not span.year_given:
                span = _in_year(span, prev.last.year)
                if span.last < prev.first:  # "December 2022 to March": March 2023
                    span = _in_year(span, prev.last.year + 1)
            elif span.last < prev.first:
                prev, span = _forward(query, prev, span, today)
            out[-1] = Span(prev.start, span.end, min(prev.first, span.first),
                           max(prev.last, span.last))
        else:
            out.append(span)
    return out


def _forward(query: str, start: Span, end: Span, today: dt.date) -> tuple[Span, Span]:
    """A range whose ends, each read alone, run backwards: "Monday to Wednesday" on a Wednesday
    (each weekday alone is the latest before today: Monday the 8th, Wednesday the 3rd), "from
    October to March" in December (this October, this March). Said together, the end is the
    first one after the start, or, when that is still to come, the start is the one before the
    end: May 8th to 10th, October of last year to this March."""
    weekdays = all(s.relative and s.first == s.last and _WEEKDAY.search(query[s.start:s.end])
                   for s in (start, end))
    if weekdays:
        later = dataclasses.replace(end, first=end.first + _WEEK, last=end.last + _WEEK)
        if later.last <= today:
            return start, later
        return dataclasses.replace(start, first=start.first - _WEEK,
                                   last=start.last - _WEEK), end
    if start.relative or end.relative or start.year_given or end.year_given:
        return start, end  # "from 2023 to 2021", "last week to May 3": as said
    later = _in_year(end, end.first.year + 1)
    if later.last <= today:
        return start, later
    return _in_year(start, start.first.year - 1), end


def bracketed(query: str, spans: list[Span]) -> list[Span]:
    """A date that opens a bracket closes it: "Thursday (September 21, 2023)" is understood
    whole, not as "Thursday (September 21, 2023"."""
    out = []
    for span in spans:
        end = span.end
        for opening, closing in ("()", "（）"):
            inner = query[span.start:end]
            after = _CLOSING[closing].match(query, end)
            if after and inner.count(opening) > inner.count(closing):
                end = after.end()
        out.append(dataclasses.replace(span, end=end))
    return out


def _in_year(span: Span, year: int) -> Span:
    return Span(span.start, span.end, with_year(span.first, year), with_year(span.last, year))


def with_year(day: dt.date, year: int) -> dt.date:
    try:
        return day.replace(year=year)
    except ValueError:  # Feb 29 in a year without one
        return day.replace(year=year, day=28)


def with_parts(query: str, spans: list[Span], today: dt.date) -> list[Span]:
    """"early March", "the end of last month", 三月初, 去年年底: that part of the span's period
    (`arithmetic.part_of`), the part's words taken with it. A period said without its year
    whose part lies after today is last year's ("late December" on December 4th)."""
    out = []
    for s in spans:
        of = _OF.match(query, s.start)
        before = words_before(_PART_BEFORE, query, of.end() if of else s.start)
        after = _PART_AFTER_CJK.match(query, s.end)
        found = before or after
        if found is None or (s.last - s.first).days < 6:
            out.append(s)
            continue
        part = part_index(found["near"] if before and found["near"] else found["part"])
        first, last = part_of(s.first, s.last, part)
        if first > today and not s.year_given and not s.relative:
            first, last = part_of(with_year(s.first, s.first.year - 1),
                                  with_year(s.last, s.last.year - 1), part)
        out.append(Span(before.start() if before else s.start, after.end() if after else s.end,
                        first, last, s.year_given, s.relative))
    return out


def since(query: str, spans: list[Span], today: dt.date) -> list[Span]:
    """"since March", 年初到现在, 本月至今: from the start of March (of the year, of this month)
    to today, not to the month's end."""
    out = []
    for s in spans:
        now = _UNTIL_NOW.match(query, s.end)
        if now or words_before(_SINCE_BEFORE, query, s.start) or _SINCE_IN.match(query, s.start):
            last = today if s.first <= today else s.last
            s = Span(s.start, now.end() if now else s.end, s.first, last, s.year_given)
        out.append(s)
    return out


def weeks(query: str, spans: list[Span]) -> list[Span]:
    """"the week of March 27": the week holding the day, the words "the week of" with it."""
    out = []
    for s in spans:
        before, after = words_before(_WEEK_BEFORE, query, s.start), _WEEK_AFTER.match(query, s.end)
        if s.first == s.last and (before or after):
            first, last = week_of(s.first)
            s = Span(before.start() if before else s.start, after.end() if after else s.end,
                     first, last, s.year_given, s.relative)
        out.append(s)
    return out
