"""Calendar arithmetic for the date forms (`search/dates/forms.py`, `chinese.py`,
`periods.py`): month and weekday names, counts and years as written, months, ISO
weeks (Monday to Sunday), "the most recent such day not after today", and the resolver type
every form has."""

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
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# A weekday's name in any common spelling: "Monday", "Mon.", "Tues" (no group)
WEEKDAY_WORD = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?\.?"
# A count as written ("three days ago", "a couple of weeks", "the last 24 hours")
COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
          "couple": 2, "few": 3, "several": 3, "twenty-four": 24, "forty-eight": 48,
          "seventy-two": 72}

# A form's answer: (first day, last day[, whether the phrase gave its year]), or None when the
# phrase is no date after all (February 30th, month 13).
Resolved = tuple[dt.date, dt.date] | tuple[dt.date, dt.date, bool] | None
Resolver = Callable[["re.Match[str]", dt.date], Resolved]
Form = tuple["re.Pattern[str]", Resolver]


def weekday_number(name: str) -> int:
    """0 (Monday) to 6 of a weekday's name in any spelling WEEKDAY_WORD matches."""
    return next(i for i, w in enumerate(WEEKDAYS) if w.startswith(name[:3].lower()))


def month_number(name: str) -> int:
    """March, Mar., mar -> 3 (a name MONTH_NAME matched)."""
    return _MONTHS.index(name[:3].lower()) + 1


def count_of(text: str) -> int:
    """12, twelve, a couple of, a few, twenty-four -> a number (one COUNTS or digits matched)."""
    words = text.lower().replace("twenty four", "twenty-four").split()
    return int(words[0]) if words[0].isdigit() else max(COUNTS[w] for w in words
                                                        if w in COUNTS)


def full_year(text: str) -> int:
    """2023, '23, 23 -> 2023; a two-digit year from 69 on is the 1900s ('99 -> 1999), as
    POSIX strptime's %y reads it."""
    year = int(text.lstrip("'"))
    return year if year >= 100 else year + (2000 if year < 69 else 1900)


def month_range(year: int, month: int) -> tuple[dt.date, dt.date]:
    return dt.date(year, month, 1), dt.date(year, month, calendar.monthrange(year, month)[1])


def week_of(day: dt.date) -> tuple[dt.date, dt.date]:
    monday = day - day.weekday() * DAY
    return monday, monday + 6 * DAY


def shift_months(day: dt.date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def same_day_months_back(today: dt.date, months: int) -> dt.date:
    """Today's day of the month `months` months back, or that month's last day where it is
    shorter (a 31st a month back; a 29th of February a year, 12 months, back is the 28th)."""
    year, month = shift_months(today, -months)
    return dt.date(year, month, min(today.day, month_range(year, month)[1].day))


def one_day(day: dt.date | None) -> Resolved:
    """A day found, as the range of that one day; None when there is none (February 30th)."""
    return None if day is None else (day, day)


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


def latest_day_of_month(today: dt.date, wanted: int, weekday: int | None = None
                        ) -> dt.date | None:
    """The latest `wanted`th of a month not after today (that fell on `weekday`, when given:
    each weekday meets each day of the month within 20 months)."""
    for back in range(21):
        day = ymd(*shift_months(today, -back), wanted)
        if day is not None and day <= today and weekday in (None, day.weekday()):
            return day
    return None


def weekend_around(first: dt.date, last: dt.date) -> tuple[dt.date, dt.date]:
    """The long weekend days first..last make ("Labor Day weekend", "the 4th of July weekend"):
    those days with the Saturday and Sunday next to them (a Monday: Saturday to Monday; a
    Friday: Friday to Sunday; a Sunday: Saturday and Sunday)."""
    start = first - ((first.weekday() + 2) % 7 if first.weekday() in (0, 1, 6) else 0) * DAY
    end = last + (6 - last.weekday() if last.weekday() in (2, 3, 4, 5) else 0) * DAY
    return start, end


def latest_begun(today: dt.date, period: Callable[[int], tuple[dt.date, dt.date]]
                 ) -> tuple[dt.date, dt.date, bool]:
    """A yearly period said without its year ("in Q3", "the first week of November", "at
    Christmas", "in the summer"): this year's when it has begun by today, else last year's;
    False: the phrase gave no year (a caller may move it back further)."""
    first, last = period(today.year)
    return (first, last, False) if first <= today else (*period(today.year - 1), False)


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


def nth_weekday(year: int, month: int, nth: int, weekday: int) -> dt.date | None:
    """The `nth` `weekday` (0 = Monday; nth -1: the last) of a month, None when it has no such
    day ("the fifth Monday" of a month with four)."""
    first_day, last_day = month_range(year, month)
    if nth > 0:
        day = first_day + ((weekday - first_day.weekday()) % 7 + 7 * (nth - 1)) * DAY
    else:
        day = last_day - ((last_day.weekday() - weekday) % 7) * DAY
    return None if day > last_day else day


RELATIVE: set[Resolver] = set()


def relative(resolve: Resolver) -> Resolver:
    """Marks a form whose day is counted from today ("yesterday", "last week"), not named."""
    RELATIVE.add(resolve)
    return resolve


TOPICAL: set[Resolver] = set()


def topical(resolve: Resolver) -> Resolver:
    """Marks a form whose words may be the topic rather than a date: "during Thanksgiving" in
    "what tradition does Tim love during Thanksgiving" is a habit, not last November's day.
    `search/dates/query.py` reads such a phrase as a date only when nothing else is asked."""
    TOPICAL.add(resolve)
    return resolve


def offset(days: int) -> Resolver:
    def resolve(match: re.Match[str], today: dt.date) -> Resolved:
        return today - days * DAY, today - days * DAY
    return relative(resolve)


# The part of a period a phrase asks for: "early March", "the end of last month", "the first
# half of November", 三月初, 上个月底. (index, of how many parts)
PART_WORD = (r"(?P<part>beginning|start|middle|end|(?:first|second|latter|last|back)\s+half"
             r"|early|late|mid(?:dle)?)")
_PARTS = {"beginning": (1, 3), "start": (1, 3), "early": (1, 3), "初": (1, 3), "上旬": (1, 3),
          "middle": (2, 3), "mid": (2, 3), "中旬": (2, 3),
          "end": (3, 3), "late": (3, 3), "底": (3, 3), "末": (3, 3), "下旬": (3, 3),
          "first": (1, 2), "second": (2, 2), "latter": (2, 2), "last": (2, 2), "back": (2, 2)}


def part_index(word: str) -> tuple[int, int]:
    """"end", "late", 底 -> (3, 3); "first half" -> (1, 2): a PART_WORD (or 初, 上旬...)."""
    return _PARTS[word.lower().split()[0]]


def part_of(first: dt.date, last: dt.date, part: tuple[int, int]) -> tuple[dt.date, dt.date]:
    """Part `index` of `count` of the days first..last. A month's thirds are days 1-10, 11-20
    and 21 to its end (early/mid/late; 上旬/中旬/下旬), its halves 1-15 and 16 to its end; a run
    of whole months splits by months (a year's thirds: January-April, May-August,
    September-December); any other run by days (a week's: Monday-Tuesday, Wednesday-Thursday,
    Friday-Sunday)."""
    index, count = part
    months = _whole_months(first, last)
    if months == 1:
        cuts = (1, 11, 21) if count == 3 else (1, 16)
        start = first.replace(day=cuts[index - 1])
        return start, last if index == count else first.replace(day=cuts[index]) - DAY
    if months and months % count == 0:
        size = months // count
        start_year, start_month = shift_months(first, (index - 1) * size)
        end_year, end_month = shift_months(first, index * size - 1)
        return dt.date(start_year, start_month, 1), month_range(end_year, end_month)[1]
    size = ((last - first).days + 1) // count
    start = first + (index - 1) * size * DAY
    return start, last if index == count else start + (size - 1) * DAY


def _whole_months(first: dt.date, last: dt.date) -> int | None:
    """How many calendar months first..last is, when it is whole months; else None."""
    if first.day != 1 or (last + DAY).day != 1:
        return None
    return (last.year - first.year) * 12 + last.month - first.month + 1


def units_back(today: dt.date, unit: str, back: int) -> tuple[dt.date, dt.date]:
    """The calendar week (Monday to Sunday), month or year `back` of them before today's."""
    if unit == "week":
        return week_of(today - 7 * back * DAY)
    if unit == "month":
        return month_range(*shift_months(today, -back))
    return year_range(today.year - back)


def latest_part(today: dt.date, unit: str, part: tuple[int, int]) -> tuple[dt.date, dt.date] | None:
    """`part` of this week|month|year, or of the one before when this one's has not begun
    ("the end of the month" on December 4th: November 21-30)."""
    for back in (0, 1):
        first, last = part_of(*units_back(today, unit, back), part)
        if first <= today:
            return first, last
    return None
