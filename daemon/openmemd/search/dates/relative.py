"""The English date forms counted from today: "yesterday", "last week", "three days ago", "the
past 3 days", "last Friday", "Tuesday of last week", "the weekend", "the Monday before last",
"two Fridays ago", "a week ago today", "the last 24 hours", "a fortnight ago", "the end of the
month", "earlier this week", "the 8th of last month", and as chat writes them ("yday", "last
wknd", "2 wks ago", "on Tues") (conventions: `search/dates/forms.py`).
Calendar arithmetic only: dateparser gives one point in time ("last week": seven days ago), not
the week, and reads no "before last".

A part of a period ("the end of the month", "the start of the year") said without naming which
one is the latest such part begun by today: on December 4th "the end of the month" is the end of
November, "the beginning of the year" this January to April (`arithmetic.part_of`).
"""

from __future__ import annotations

import datetime as dt
import re

from openmemd.search.dates.arithmetic import (
    DAY,
    MONTH_NAME,
    PART_WORD,
    WEEKDAYS,
    Form,
    Resolved,
    count_of,
    latest_part,
    month_number,
    month_range,
    most_recent_weekday,
    offset,
    one_day,
    part_index,
    relative,
    same_day_months_back,
    shift_months,
    units_back,
    week_of,
    weekday_number,
    ymd,
)

# A weekday's name, or an abbreviation that is no English word ("Tues", "Thurs"; not "Wed",
# "Sat", "Sun", "Mon")
_WEEKDAY = rf"(?P<wd>{'|'.join(WEEKDAYS)}|tues?|weds|thu(?:rs?)?|fri)"
_NOT_FUTURE_BEFORE = r"(?<!next\s)(?<!coming\s)(?<!upcoming\s)(?<!week\son\s)(?<!week's\s)"
_NOT_FUTURE_AFTER = r"(?!\s+(?:of\s+)?next\s+week|\s+after\s+next)"
_NUMBER_WORD = (r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
                r"|\d{1,3})")
# "two nights ago": a day; "2 wks ago", "3 mos back", "2 yrs ago" as chat writes them
_UNITS = r"(?:days?|nights?|weeks?|wks?|fortnights?|months?|mos|mths?|years?|yrs?)"
# "three days ago", "a week ago", "two days back" (+ today, yesterday: to the day)
_AGO = rf"\b(?P<n>{_NUMBER_WORD})\s+(?P<unit>{_UNITS})\s+(?:ago|back)"
_COUNT = (r"(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
          r"|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|several)")
_UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}


def _unit(text: str) -> str:
    unit = text.lower().rstrip("s")
    return _UNIT_NAMES.get(unit, unit)


_UNIT_NAMES = {"night": "day", "wk": "week", "mo": "month", "mth": "month", "yr": "year"}


@relative
def _ago(match: re.Match[str], today: dt.date) -> Resolved:
    """three days ago: that day; 2 weeks ago, a fortnight ago: that week; a month ago: that
    month; a year ago: that year."""
    n, unit = count_of(match["n"]), _unit(match["unit"])
    if unit == "fortnight":
        n, unit = 2 * n, "week"
    if n * _UNIT_DAYS[unit] > 36600:
        return None
    if unit == "day":
        return today - n * DAY, today - n * DAY
    return units_back(today, unit, n)


@relative
def _ago_to_the_day(match: re.Match[str], today: dt.date) -> Resolved:
    """a week ago today, a month ago yesterday, this day last year, exactly a year ago: that
    one day."""
    n = count_of(match["n"]) if match["n"] else 1
    unit = _unit(match["unit"])
    if unit in ("month", "year"):
        day = same_day_months_back(today, n * (12 if unit == "year" else 1))
    else:
        day = today - n * _UNIT_DAYS[unit] * DAY
    if (match["anchor"] or "").lower() == "yesterday":
        day -= DAY
    return day, day


@relative
def _relative_unit(match: re.Match[str], today: dt.date) -> Resolved:
    """last/past/previous/this/current week|month|year; "the week before last"."""
    which, unit = match["which"].lower(), _unit(match["unit"])
    back = 0 if which in ("this", "current") else 2 if match["before"] else 1
    if which == "past" or unit == "fortnight":  # "the past week": the days up to today
        return today - _UNIT_DAYS[unit] * DAY, today
    return units_back(today, unit, back)


@relative
def _so_far(match: re.Match[str], today: dt.date) -> Resolved:
    """earlier this week, this month so far: from the start of the week/month/year to today
    (not the days still to come: no note has them)."""
    return units_back(today, match["unit"].lower(), 0)[0], today


@relative
def _past_n(match: re.Match[str], today: dt.date) -> Resolved:
    """the past/last N days|weeks: up to today."""
    days = count_of(match["n"]) * _UNIT_DAYS[_unit(match["unit"])]
    return (today - days * DAY, today) if 0 < days <= 3660 else None


@relative
def _hours(match: re.Match[str], today: dt.date) -> Resolved:
    """the last 24 hours, the past hour, 3 hours ago: the days they reach into (the time of
    day is unknown, so 24 hours reach back to yesterday). "The last hour" without a count is
    no date: "the last hour of the workshop"."""
    if not match["n"] and "last" in match.group().lower():
        return None
    hours = count_of(match["n"]) if match["n"] else 1
    days = -(-hours // 24)
    return (today - days * DAY, today) if 0 < hours <= 24 * 31 else None


@relative
def _about_ago(match: re.Match[str], today: dt.date) -> Resolved:
    """a couple of / a few / several days|weeks|months ago: a count said loosely (a couple is
    2, a few 3), so a unit either side of it."""
    n, unit = count_of(match["n"]), _unit(match["unit"])
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
    day = week_of(today)[0] + (weekday_number(match["wd"]) - 7 * back) * DAY
    return day, day


@relative
def _weekday(match: re.Match[str], today: dt.date) -> Resolved:
    target = weekday_number(match["wd"])
    if (match["which"] or "").lower() == "this":
        day = week_of(today)[0] + target * DAY
    else:  # "last Friday", "on Friday": the most recent one before today
        day = most_recent_weekday(today, target)
    return day, day


@relative
def _weeks_ago_weekday(match: re.Match[str], today: dt.date) -> Resolved:
    """"a week ago Monday", "two weeks ago Friday": that weekday so many weeks before the
    latest one on or before today (said on a Monday, "a week ago Monday" is a week ago)."""
    n = count_of(match["n"])
    if not 1 <= n <= 52:
        return None
    day = most_recent_weekday(today + DAY, weekday_number(match["wd"])) - 7 * n * DAY
    return day, day


@relative
def _weekdays_back(match: re.Match[str], today: dt.date) -> Resolved:
    """the Monday before last: the one before last Monday; two Fridays ago: the second most
    recent Friday before today."""
    n = count_of(match["n"]) if match["n"] else 2
    if not 1 <= n <= 52:
        return None
    day = most_recent_weekday(today, weekday_number(match["wd"])) - 7 * (n - 1) * DAY
    return day, day


@relative
def _the_other_day(match: re.Match[str], today: dt.date) -> Resolved:
    """"the other day": some day of the past week, not today; "the other week": one to three
    weeks back."""
    if match["unit"].lower() == "week":
        return today - 21 * DAY, today - 7 * DAY
    return today - 7 * DAY, today - DAY


@relative
def _month_relative(match: re.Match[str], today: dt.date) -> Resolved:
    """"last March", "this past May": the latest such month before this one; "this July":
    this year's."""
    month = month_number(match["m"])
    if match["which"].lower() == "this":
        return None if match["m"].lower() == "may" else month_range(today.year, month)
    return month_range(today.year if month < today.month else today.year - 1, month)


@relative
def _month_of_year(match: re.Match[str], today: dt.date) -> Resolved:
    """"March of last year", "May this year"."""
    back = match["which"].lower() == "last"
    return month_range(today.year - back, month_number(match["m"]))


@relative
def _weekend(match: re.Match[str], today: dt.date) -> Resolved:
    which = (match["which"] or "").lower()
    this_week = week_of(today)[0]
    if which == "this" or (which in ("", "the") and today.weekday() >= 5):
        monday = this_week
    else:
        monday = this_week - 7 * DAY
    return monday + 5 * DAY, monday + 6 * DAY


@relative
def _part_of_current(match: re.Match[str], today: dt.date) -> Resolved:
    """the end of the month, the start of the year: the latest such part begun by today."""
    return latest_part(today, match["unit"].lower(), part_index(match["part"]))


@relative
def _day_of(match: re.Match[str], today: dt.date) -> Resolved:
    """the 8th of this (or "the") month, of last month: that day of that month."""
    back = 1 if match["which"].lower().split()[-1] in ("last", "previous") else 0
    return one_day(ymd(*shift_months(today, -back), int(match["d"])))


_I = re.IGNORECASE
RELATIVE_FORMS: tuple[Form, ...] = (
    # "three days ago", "2 weeks ago", "a month ago", "a fortnight ago"
    (re.compile(rf"{_AGO}\b", _I), _ago),
    # "a week ago today", "a month ago yesterday", "this day last year", "this time last week"
    (re.compile(rf"{_AGO}\s+(?P<anchor>today|yesterday)\b", _I), _ago_to_the_day),
    # "exactly a year ago", "a month ago to the day"
    (re.compile(rf"\b(?:exactly|precisely)\s+{_AGO}(?P<anchor>)\b", _I), _ago_to_the_day),
    (re.compile(rf"{_AGO}\s+to\s+the\s+day(?P<anchor>)\b", _I), _ago_to_the_day),
    (re.compile(r"\b(?:this|the\s+same)\s+(?:day|date|time)\s+(?P<n>)last\s+(?P<unit>week"
                r"|month|year)(?P<anchor>)\b", _I), _ago_to_the_day),
    # "last March", "this past May", "this July" (not "the last march", a walk, nor "this may
    # be", a verb); "March of last year", "May this year"
    (re.compile(rf"(?<!the\s)(?<!at\s)\b(?P<which>last|this(?:\s+past)?)\s+"
                rf"(?P<m>{MONTH_NAME})\b", _I), _month_relative),
    # (not after a day: "8 May of last year" is that day, search/dates/query.py joins the two)
    (re.compile(rf"(?<!\d\s)(?<!\d(?:st|nd|rd|th)\s)\b(?P<m>{MONTH_NAME})\s+(?:of\s+)?"
                r"(?P<which>last|this)\s+year\b", _I), _month_of_year),
    (re.compile(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b", _I), offset(0)),
    (re.compile(r"\b(?:yesterday|yday|yest|last\s+night)\b", _I), offset(1)),
    # ("the day before last Friday": search/dates/offsets.py)
    (re.compile(r"\b(?:the\s+)?(?:day|night)\s+before\s+(?:yesterday|last(?!\s+(?:mon|tue|wed"
                r"|thu|fri|sat|sun|week|month|year|night|time|summer|winter|spring|fall|autumn)))\b",
                _I), offset(2)),
    # "the other day", "the other night", "the other week" (a loose "recently" is no date)
    (re.compile(r"\bthe\s+other\s+(?P<unit>day|night|week)\b", _I), _the_other_day),
    (re.compile(r"\b(?:the\s+)?(?P<which>last|past|previous|this|current)\s+(?P<unit>week|wk"
                r"|month|year|yr|fortnight)(?P<before>\s+before\s+last)?\b", _I), _relative_unit),
    (re.compile(r"\bthe\s+(?P<which>)(?P<unit>week|month|year)(?P<before>\s+before\s+last)\b",
                _I), _relative_unit),
    (re.compile(r"\b(?:earlier|so\s+far)\s+this\s+(?P<unit>week|month|year)\b", _I), _so_far),
    (re.compile(r"\bthis\s+(?P<unit>week|month|year)\s+so\s+far\b", _I), _so_far),
    (re.compile(rf"\b(?:the\s+)?(?:past|last)\s+(?P<n>{_COUNT})\s+(?P<unit>{_UNITS})\b", _I),
     _past_n),
    # "the last 24 hours", "the past hour", "a few hours ago"
    (re.compile(rf"\b(?:the\s+)?(?:past|last)\s+(?:(?P<n>{_COUNT}|twenty[-\s]four|forty-eight"
                r"|seventy-two)\s+)?(?:hours?|hrs?)\b", _I), _hours),
    (re.compile(rf"\b(?P<n>{_COUNT}|an?)\s+(?:hours?|hrs?)\s+ago\b", _I), _hours),
    (re.compile(r"\b(?P<n>(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|several)\s+(?P<unit>days?"
                r"|weeks?|wks?|months?)\s+(?:ago|back)\b", _I), _about_ago),
    (re.compile(rf"\b(?:on\s+)?{_WEEKDAY}\s+(?:of\s+)?(?P<which>last|this|previous)\s+week\b",
                _I), _weekday_of_week),
    (re.compile(rf"\b(?P<which>last|this|previous)\s+week(?:'s|\s+on)?\s+{_WEEKDAY}\b", _I),
     _weekday_of_week),
    # "last Friday", "on Friday" (not "next Monday", "this coming Friday", "Friday next week",
    # "the Monday after next": the future names no note's day, and no past Friday is meant)
    (re.compile(rf"\b(?:(?P<which>last|this|past|on)\s+)?{_NOT_FUTURE_BEFORE}{_WEEKDAY}\b"
                rf"{_NOT_FUTURE_AFTER}", _I), _weekday),
    # "on Wed", "last Sat": the abbreviations that are words too, only capitalised after these
    (re.compile(rf"\b(?P<which>(?i:last|this|past|on))\s+{_NOT_FUTURE_BEFORE}"
                rf"(?P<wd>Mon|Wed|Sat|Sun)\b\.?(?!\s*(?!(?:morning|afternoon|evening|night)\b)[a-z])"
                rf"{_NOT_FUTURE_AFTER}"), _weekday),
    # "the Monday before last", "two Fridays ago"
    (re.compile(rf"\b(?:on\s+)?(?:the\s+)?(?P<n>){_WEEKDAY}\s+before\s+last\b", _I),
     _weekdays_back),
    (re.compile(rf"\b(?P<n>{_NUMBER_WORD})\s+{_WEEKDAY}s\s+ago\b", _I), _weekdays_back),
    (re.compile(rf"\b(?P<n>{_NUMBER_WORD})\s+weeks?\s+ago\s+(?:on\s+|last\s+)?{_WEEKDAY}\b", _I),
     _weeks_ago_weekday),
    (re.compile(r"\b(?:(?P<which>last|this|past|the)\s+)?(?:weekend|wknd)\b", _I), _weekend),
    # "the 8th of this month", "on the 8th of last month", "last month's 8th"
    (re.compile(r"\b(?:on\s+)?the\s+(?P<d>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?\s+of\s+"
                r"(?P<which>this|last|the\s+previous|the\s+current|the)\s+month\b", _I), _day_of),
    (re.compile(r"\b(?P<which>this|last)\s+month'?s\s+(?P<d>3[01]|[12]\d|0?[1-9])"
                r"(?:st|nd|rd|th)\b", _I), _day_of),
    # "the end of the month", "the start of the year", "the middle of the week"
    (re.compile(rf"\b(?:the\s+)?(?:very\s+)?{PART_WORD}\s+of\s+the\s+(?P<unit>week|month|year)\b",
                _I), _part_of_current),
)
