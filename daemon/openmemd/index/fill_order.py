"""Which chunks get their vectors first: the useful part of a workspace before the rest.

A first index of a real workspace embeds for hours. Until a chunk has its vector it is found by
keyword only, so the fill goes where a search most likely looks: the long-term files an agent
loads at every start (MEMORY.md, USER.md), then the dated notes newest first (the recent past
is asked about most, and decay ranks it higher anyway), then other memory files, then
transcripts (long, repetitive, and the least often asked). Files just edited go before all of
them (`first`): a note saved now is the one about to be searched for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date

from openmemd.index.blocks import LONG_TERM_FILES
from openmemd.store.base import PendingFile

# memory/…/YYYY-MM-DD.md and its slugged variants (memory/YYYY-MM-DD-<slug>.md)
_DATED = re.compile(r"(?:^|/)memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})(?:-[^/]*)?\.md$")


def _day(path: str) -> int | None:
    m = _DATED.search(path)
    if m is None:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3])).toordinal()
    except ValueError:  # 2026-13-45.md: just a name
        return None


def rank(path: str, source: str) -> tuple[int, int, str]:
    """Sort key of a file in the fill: smaller goes first."""
    if source != "memory":
        return (3, 0, path)
    if path in LONG_TERM_FILES:
        return (0, 0, path)
    day = _day(path)
    if day is not None:
        return (1, -day, path)  # newest first
    return (2, 0, path)


def plan(pending: Iterable[PendingFile], first: Sequence[str] = ()) -> list[PendingFile]:
    """The files with pending chunks in the order they are embedded: `first` (in its order),
    then by `rank`."""
    files = {f.path: f for f in pending}
    head = [files.pop(p) for p in dict.fromkeys(first) if p in files]
    return head + sorted(files.values(), key=lambda f: rank(f.path, f.source))
