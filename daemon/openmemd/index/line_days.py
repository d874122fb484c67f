"""The days of lines the index cannot date by itself, for a query that names a date.

Two kinds of file hold lines of many days, and the index keeps none of them:

- a session transcript: each message has its own timestamp, but the index keeps its rendered
  text and the file's mtime. Only transcripts written to on or after the range's first day are
  read (a file's mtime is when its last message was written: an older file holds nothing of the
  range), newest first, at most MAX_TRANSCRIPTS; a day is the message's in the time zone "today"
  is taken in (dreaming's), as for dated notes;
- a long-term file (MEMORY.md, memory.md, USER.md), indexed fact by fact (`index/blocks.py`):
  a section under "## 2026-06-30 decisions" is about that day, but only its first fact's chunk
  holds the heading.

Files are read at query time within the indexer's own bounds (size, no symlinks) and each
file's days are remembered by (mtime, size, ctime, time zone), so a second date query reads
nothing again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime, timezone, tzinfo

from openmemd.index.blocks import LONG_TERM_FILES
from openmemd.index.lines.transcript import render_entry
from openmemd.index.scan import (
    FileEntry,
    ScanScope,
    SkipFile,
    read_content,
    scan_workspace,
    stat_entry,
)
from openmemd.text.headings import dated_sections

MAX_TRANSCRIPTS = 64  # transcripts read for one query, newest first
MAX_REMEMBERED = 256  # files whose line days are kept between queries

_Key = tuple[int, int, int, str]  # mtime ms, size, ctime ns, time zone


class LineDays:
    """The days of a workspace's transcript messages and long-term sections, read on demand
    and remembered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._days: OrderedDict[str, tuple[_Key, dict[int, date]]] = OrderedDict()

    def in_range(self, scope: ScanScope, first: date, covers: Callable[[date], bool],
                 tz: tzinfo, *, sources: Sequence[str] | None = None
                 ) -> dict[str, Mapping[int, date]]:
        """For each file with lines on a day `covers` accepts (none before `first`): those
        lines and their days. `sources`: the sources searched (None: all)."""
        wanted = [s for s in scope.sources if sources is None or s in sources]
        entries: list[FileEntry] = []
        dated = tuple(s for s in wanted if s != "memory")  # transcripts, agents' sessions
        if dated:
            recent = [e for e in scan_workspace(replace(scope, sources=dated))
                      if (_day(e.mtime_ms, tz) or date.min) >= first]
            recent.sort(key=lambda e: e.mtime_ms, reverse=True)
            entries += recent[:MAX_TRANSCRIPTS]
        if "memory" in wanted:
            entries += [e for name in sorted(LONG_TERM_FILES)
                        if (e := stat_entry(scope, name)) is not None and e.source == "memory"]
        found: dict[str, Mapping[int, date]] = {}
        for entry in entries:
            days = self._days_of(scope, entry, tz)
            in_range = {line: day for line, day in days.items() if covers(day)}
            if in_range:
                found[entry.path] = in_range
        return found

    def _days_of(self, scope: ScanScope, entry: FileEntry, tz: tzinfo) -> dict[int, date]:
        key = (entry.mtime_ms, entry.size, entry.ctime_ns, str(tz))
        with self._lock:
            held = self._days.get(entry.path)
            if held is not None and held[0] == key:
                self._days.move_to_end(entry.path)
                return held[1]
        try:
            text = read_content(scope, entry).text
        except SkipFile:
            return {}  # unreadable, too big, gone: not indexed either
        if entry.source != "memory":
            rendered = render_entry(entry.source, entry.path, text)
            days = {line: day for line, ms in zip(rendered.line_map, rendered.timestamps,
                                                  strict=True)
                    if (day := _day(ms, tz)) is not None}
        else:
            days = dated_sections(text)
        with self._lock:
            self._days[entry.path] = (key, days)
            self._days.move_to_end(entry.path)
            while len(self._days) > MAX_REMEMBERED:
                self._days.popitem(last=False)
        return days


def _day(ms: int, tz: tzinfo) -> date | None:
    if ms <= 0:
        return None  # a message without a timestamp belongs to no day
    try:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).astimezone(tz).date()
    except (OverflowError, OSError, ValueError):
        return None
