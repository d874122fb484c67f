"""Temporal decay: older dated notes count less; long-term memory never fades.

multiplier = exp(−ln2 / half_life · age_days), i.e. 0.5 at the half-life.
Age comes from the date in the file name for `memory/…/YYYY-MM-DD.md` (midnight UTC of that
date), and is 0 for evergreen files: `MEMORY.md`, `memory.md` and undated files under
`memory/` (source "memory"). Anything else (session transcripts, extra paths) ages from its
file mtime as the index recorded it (`StoreReader.file_mtimes`: no file is read or stat'ed at
search time). Dates in the future give age 0, never a boost.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from calendar import timegm
from collections.abc import Callable, Mapping

SECONDS_PER_DAY = 86_400.0
_DATED = re.compile(r"(?:^|/)memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})\.md$")
_EVERGREEN_ROOT = frozenset({"MEMORY.md", "memory.md"})


def decay_multiplier(age_days: float, half_life_days: float) -> float:
    """exp(−ln2/half_life · age); age ≤ 0 (or unknown) → 1."""
    if not math.isfinite(age_days) or age_days <= 0:
        return 1.0
    half_life = max(1.0, math.floor(half_life_days)) if math.isfinite(half_life_days) else 30.0
    return math.exp(-math.log(2) / half_life * age_days)


def dated_note_timestamp(path: str) -> float | None:
    """Unix time of midnight UTC of the date in a dated note's path; None if not a dated note."""
    m = _DATED.search(path.replace("\\", "/"))
    if m is None:
        return None
    try:
        day = dt.date(*(int(g) for g in m.groups()))
    except ValueError:  # memory/2024-02-31.md is not a date: the file is evergreen
        return None
    return float(timegm(day.timetuple()))


def is_evergreen(path: str, source: str) -> bool:
    """MEMORY.md, memory.md and undated Markdown under memory/ (source "memory")."""
    if source != "memory":
        return False
    p = path.replace("\\", "/")
    if p in _EVERGREEN_ROOT:
        return True
    return (p.startswith("memory/") or "/memory/" in p) and dated_note_timestamp(p) is None


def uses_mtime(path: str, source: str) -> bool:
    """Whether a file's age comes from its mtime (neither dated nor evergreen)."""
    return dated_note_timestamp(path) is None and not is_evergreen(path, source)


def age_days(path: str, source: str, *, now: float,
             mtime: Callable[[str], float | None]) -> float:
    """Age in days used for decay; 0 for evergreen, future-dated and unknown files."""
    stamp = dated_note_timestamp(path)
    if stamp is None:
        if is_evergreen(path, source):
            return 0.0
        stamp = mtime(path)
    if stamp is None:
        return 0.0
    return max(0.0, (now - stamp) / SECONDS_PER_DAY)


class DecayCalculator:
    """Per-search helper: decay multipliers from the indexed mtimes (ms) of the files that age
    by mtime (`uses_mtime`); a file missing from `mtimes` has age 0."""

    def __init__(self, mtimes: Mapping[str, int], now: float, half_life_days: float) -> None:
        self._mtimes = mtimes
        self._now = now
        self._half_life = half_life_days

    def _mtime(self, path: str) -> float | None:
        ms = self._mtimes.get(path)
        return None if ms is None else ms / 1000.0

    def age(self, path: str, source: str) -> float:
        return age_days(path, source, now=self._now, mtime=self._mtime)

    def multiplier(self, path: str, source: str) -> float:
        return decay_multiplier(self.age(path, source), self._half_life)
