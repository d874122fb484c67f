"""When a session transcript's messages were written: for a query that names a date.

The index keeps a transcript's rendered messages and its file's mtime, not the time of each
message, so "what did we talk about last Tuesday" cannot be answered from the store alone. The
messages' timestamps are read here from the transcripts themselves, at query time and only for
a query naming a date:

- only transcripts written to on or after the range's first day: a file's mtime is when its
  last message was written, so an older file holds nothing of the range;
- newest first, at most MAX_FILES of them (a range reaching far back would otherwise read every
  transcript); each read within the indexer's own bounds (size, no symlinks);
- remembered per file by (mtime, size, time zone), so a second date query reads nothing again.

Days are those of the time zone "today" is taken in (dreaming's), as for dated notes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import date, datetime, timezone, tzinfo

from openmemd.index.scan import ScanScope, SkipFile, read_content, scan_workspace
from openmemd.index.sessions import render_session

MAX_FILES = 64  # transcripts read for one query, newest first
MAX_REMEMBERED = 256  # files whose message days are kept between queries

_Key = tuple[int, int, str]  # mtime ms, size, time zone


class TranscriptDays:
    """The message days of a workspace's transcripts, read on demand and remembered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._days: OrderedDict[str, tuple[_Key, dict[int, date]]] = OrderedDict()

    def in_range(self, scope: ScanScope, first: date, covers: Callable[[date], bool],
                 tz: tzinfo) -> dict[str, Mapping[int, date]]:
        """For each transcript with messages on a day `covers` accepts (none before `first`):
        those messages' JSONL lines and their days."""
        if "sessions" not in scope.sources:
            return {}
        only = replace(scope, sources=("sessions",))
        recent = [e for e in scan_workspace(only) if (_day(e.mtime_ms, tz) or date.min) >= first]
        recent.sort(key=lambda e: e.mtime_ms, reverse=True)
        found: dict[str, Mapping[int, date]] = {}
        for entry in recent[:MAX_FILES]:
            key = (entry.mtime_ms, entry.size, str(tz))
            days = self._remembered(entry.path, key)
            if days is None:
                try:
                    content = read_content(only, entry)
                except SkipFile:
                    continue  # unreadable, too big, gone: not indexed either
                rendered = render_session(content.text)
                days = {line: day for line, ms in zip(rendered.line_map, rendered.timestamps,
                                                      strict=True)
                        if (day := _day(ms, tz)) is not None}
                self._remember(entry.path, key, days)
            wanted = {line: day for line, day in days.items() if covers(day)}
            if wanted:
                found[entry.path] = wanted
        return found

    def _remembered(self, path: str, key: _Key) -> dict[int, date] | None:
        with self._lock:
            held = self._days.get(path)
            if held is None or held[0] != key:
                return None
            self._days.move_to_end(path)
            return held[1]

    def _remember(self, path: str, key: _Key, days: dict[int, date]) -> None:
        with self._lock:
            self._days[path] = (key, days)
            self._days.move_to_end(path)
            while len(self._days) > MAX_REMEMBERED:
                self._days.popitem(last=False)


def _day(ms: int, tz: tzinfo) -> date | None:
    if ms <= 0:
        return None  # a message without a timestamp belongs to no day
    try:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).astimezone(tz).date()
    except (OverflowError, OSError, ValueError):
        return None
