"""Seasons: "last summer", "this winter", "summer 2025", "the summer of 2024", "in the spring",
去年夏天, 今年冬天 (conventions: `search/dates/forms.py`).

A season is three calendar months (the meteorological seasons): in the northern hemisphere
spring is March-May, summer June-August, autumn ("fall") September-November, winter December-
February; in the southern one the other way round. Which hemisphere is the user's comes from
their timezone (`southern`: its latitude in the IANA zone table), northern when unknown.

A winter runs across a new year: "winter 2025" (in the north) is December 2025 to February 2026,
the winter that begins in that year. "last summer" is the latest summer already over, "this
summer" the one of this year; said after a preposition ("in the summer", "over the winter") it
is the latest one begun by today, and only when nothing else is asked: "what are Caroline's
plans for the summer" is no date (`arithmetic.topical`), and "spring boot", "the fall of
the server" name none at all.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from openmemd.search.dates.arithmetic import (
    MAX_YEAR,
    MIN_YEAR,
    Form,
    Resolved,
    full_year,
    latest_begun,
    month_range,
    relative,
    shift_months,
    topical,
)

# The first month of each season, north; the south's is six months on.
_NORTH_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12,
                "春": 3, "夏": 6, "秋": 9, "冬": 12}


def season_range(name: str, year: int, southern: bool) -> tuple[dt.date, dt.date]:
    """The three months of season `name` that begin in `year`."""
    month = _NORTH_START[name.lower()]
    if southern:
        month = (month + 6 - 1) % 12 + 1
    end_year, end_month = shift_months(dt.date(year, month, 1), 2)
    return dt.date(year, month, 1), month_range(end_year, end_month)[1]


def _last_over(name: str, today: dt.date, southern: bool) -> tuple[dt.date, dt.date]:
    """The latest such season over by today ("last summer"; a winter ends in the year after
    it begins, so two years back may be needed)."""
    for year in (today.year, today.year - 1, today.year - 2):
        first, last = season_range(name, year, southern)
        if last < today:
            return first, last
    raise AssertionError("a season recurs every year")


def _this(name: str, today: dt.date, southern: bool) -> tuple[dt.date, dt.date]:
    """this summer, 今年冬天: the one under way, else the one that begins this year."""
    for year in (today.year, today.year - 1):
        first, last = season_range(name, year, southern)
        if first <= today <= last:
            return first, last
    return season_range(name, today.year, southern)


def _forms(southern: bool) -> tuple[Form, ...]:
    def of_year(match: re.Match[str], today: dt.date) -> Resolved:
        """summer 2025, 去年夏天: the season that begins in that year."""
        if year_text := match["year"]:
            year = full_year(year_text)
            return season_range(match["name"], year, southern) if MIN_YEAR <= year <= MAX_YEAR \
                else None
        if match["which"] == "今年":
            return _this(match["name"], today, southern)
        return season_range(match["name"], today.year - 1, southern)  # 去年

    @relative
    def last_or_this(match: re.Match[str], today: dt.date) -> Resolved:
        """last summer: the latest one over; this summer: the one under way, else this year's."""
        if match["which"].lower() == "last":
            return _last_over(match["name"], today, southern)
        return _this(match["name"], today, southern)

    @topical
    def said_after_a_preposition(match: re.Match[str], today: dt.date) -> Resolved:
        return latest_begun(today, lambda year: season_range(match["name"], year, southern))

    name = r"(?P<name>spring|summer|autumn|fall|winter)"
    year = r"(?P<year>(?:19|20)\d\d(?!\d)|'\d\d(?!\d))"
    cn_name = r"(?P<name>[春夏秋冬])(?:天|季)"
    i = re.IGNORECASE
    return (
        (re.compile(rf"\b(?P<which>last|this)\s+{name}\b", i), last_or_this),
        (re.compile(rf"\b(?:the\s+)?(?P<which>){name}(?:\s+of)?\s*,?\s+{year}", i), of_year),
        (re.compile(rf"\b(?:in|during|over|through|throughout|since|for)\s+(?:the\s+)?{name}\b",
                    i), said_after_a_preposition),
        # 去年夏天, 今年冬天, 2025年冬天; 夏天 alone as "in the summer"
        (re.compile(rf"(?:(?P<year>(?:19|20)\d\d)\s*年\s*|(?P<which>今年|去年)){cn_name}"),
         of_year),
        (re.compile(rf"(?<![年])(?P<year>)(?P<which>){cn_name}"), said_after_a_preposition),
    )


NORTHERN_FORMS = _forms(southern=False)
SOUTHERN_FORMS = _forms(southern=True)


def southern(zone: str | None) -> bool:
    """Whether the IANA zone `zone` ("Australia/Sydney") lies south of the equator, by the
    zone table the tz database ships (the tzdata package's, else the system's); False for a
    zone it does not list, or none."""
    return bool(zone) and _latitudes().get(zone or "", 0.0) < 0


@lru_cache(maxsize=1)
def _latitudes() -> dict[str, float]:
    for text in _zone_tables():
        found: dict[str, float] = {}
        for line in text.splitlines():
            fields = line.split("\t")
            if len(fields) >= 3 and not line.startswith("#"):
                match = re.match(r"([+-])(\d\d)(\d\d)", fields[1])
                if match:
                    degrees = int(match[2]) + int(match[3]) / 60
                    found[fields[2]] = -degrees if match[1] == "-" else degrees
        if found:
            return found
    return {}


def _zone_tables() -> list[str]:
    texts = []
    try:  # tzdata: a dependency of python-dateutil, itself dateparser's
        texts.append(files("tzdata").joinpath("zoneinfo/zone1970.tab").read_text("utf-8"))
    except (ImportError, OSError, ValueError):
        pass
    for path in (Path("/usr/share/zoneinfo/zone1970.tab"), Path("/usr/share/zoneinfo/zone.tab")):
        try:
            texts.append(path.read_text("utf-8"))
        except OSError:
            pass
    return texts
