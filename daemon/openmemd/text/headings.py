"""Markdown headings that name a day ("## 2026-07-03 standup"): the days a note's sections are
about, for a query naming a date (`search/dated.py`, `index/line_days.py`)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator

_HEADING = re.compile(r"^(#{1,6})[ \t].*?(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
# Any ATX heading (up to 3 spaces in, "#" to "######", then a space or the line's end), as
# Markdown reads one: where a section ends, and what a block of a long-term file starts with
# (index/blocks.py).
HEADING = re.compile(r"^\s{0,3}(#{1,6})(?:\s|$)")


def heading_day(line: str) -> dt.date | None:
    """The day a heading line names (its first ISO date); None for any other line."""
    m = _HEADING.match(line)
    return None if m is None else calendar_day(m.group(2), m.group(3), m.group(4))


def heading_days(text: str) -> Iterator[dt.date]:
    """The days the headings inside `text` name, in order."""
    for line in text.split("\n"):
        if line.startswith("#") and (day := heading_day(line)) is not None:
            yield day


def dated_sections(text: str) -> dict[int, dt.date]:
    """Each line (1-based) of a section whose heading names a day, and that day: from the
    heading to the next heading of its level or above (a sub-heading stays in the section, one
    naming a day of its own takes over until it ends)."""
    days: dict[int, dt.date] = {}
    open_sections: list[tuple[int, dt.date | None]] = []  # (heading level, its day)
    for number, line in enumerate(text.split("\n"), start=1):
        m = HEADING.match(line)
        if m is not None:
            level = len(m.group(1))
            while open_sections and open_sections[-1][0] >= level:
                open_sections.pop()
            open_sections.append((level, heading_day(line)))
        day = next((d for _, d in reversed(open_sections) if d is not None), None)
        if day is not None:
            days[number] = day
    return days


def calendar_day(year: str, month: str, day: str) -> dt.date | None:
    """The day these digits spell (a heading's, a dated note's name); None if there is none
    ("2026-02-30")."""
    try:
        return dt.date(int(year), int(month), int(day))
    except ValueError:
        return None
