"""A fact shown once: a promoted MEMORY.md entry is not returned beside the note it copies.

Deep promotion (dreaming/memory_md.py, OpenClaw's format) copies a note's lines into MEMORY.md
as one entry ending in `[score=… recalls=… avg=… source=<path>:<start>-<end>]`. Once MEMORY.md
is cut by entry (index/blocks.py), a search about that fact finds both the note and its copy,
and the copy takes a result's place from the next note: on LoCoMo-dev replayed with nightly
dreaming (bench/dreaming.py), in 16 askings such copies pushed the note that answered out of
the first five. The note's chunk holds every line the entry holds (and the lines around
them), so when both are shown the entry is the one left out. A chunk holding several entries
(an older index's windows) or a line the user wrote is never left out: it says more than one
note's lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol, TypeVar

# The annotation ending a promoted entry: the source note and its lines.
_SOURCE = re.compile(r"\[score=[^\]\n]*\bsource=([^\]\n]+):(\d+)-(\d+)\]")


class _Shown(Protocol):
    path: str
    start_line: int
    end_line: int
    text: str


T = TypeVar("T", bound=_Shown)


def entry_source(text: str) -> tuple[str, int, int] | None:
    """(path, first, last line) of the note a chunk copies, when the chunk is one promoted
    entry (its marker, heading and a wrapped line may come with it); None otherwise."""
    found = _SOURCE.findall(text)
    if len(found) != 1:
        return None
    path, first, last = found[0]
    return path.strip(), int(first), int(last)


def shown_once(candidates: Iterable[T], limit: int) -> list[T]:
    """The first `limit` of `candidates` (in order), leaving out each promoted entry whose
    source lines lie inside another candidate shown."""
    shown: list[tuple[T, tuple[str, int, int] | None]] = []
    for c in candidates:
        source = entry_source(c.text)
        if source is not None and any(_holds(s, source) for s, _ in shown):
            continue  # a copy of lines already shown
        # An entry shown earlier whose source lines this candidate holds is the copy.
        shown = [(s, src) for s, src in shown if src is None or not _holds(c, src)]
        shown.append((c, source))
        if len(shown) >= limit:
            break
    return [s for s, _ in shown]


def _holds(chunk: _Shown, source: tuple[str, int, int]) -> bool:
    path, first, last = source
    return chunk.path == path and chunk.start_line <= first and last <= chunk.end_line
