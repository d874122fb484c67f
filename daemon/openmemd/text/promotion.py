"""OpenClaw's promotion format in MEMORY.md: one grammar for what deep dreaming writes and for
everything that reads it back (the archive move, the duplicate check, search's copies).

Byte for byte as OpenClaw writes it::

    ## Promoted From Short-Term Memory (YYYY-MM-DD)

    <!-- openclaw-memory-promotion:<key> -->
    - <text> Source: <path>#L<s>-L<e> [score=0.xxx recalls=N avg=0.xxx source=<path>:<s>-<e>]
"""

from __future__ import annotations

import re
from typing import NamedTuple

MARKER_PREFIX = "openclaw-memory-promotion:"
SECTION_TITLE = "Promoted From Short-Term Memory"

# A marker, wherever it is (either tool writes it alone on a line).
MARKER = re.compile(r"<!--\s*openclaw-memory-promotion:([^\n]+?)\s*-->", re.I)
SECTION = re.compile(r"^## Promoted From Short-Term Memory \(\d{4}-\d{2}-\d{2}\)$")
# The annotation ending an entry's bullet.
ANNOTATION = re.compile(r"\[score=(?P<score>\d+(?:\.\d+)?) recalls=(?P<recalls>\d+) "
                        r"avg=(?P<avg>\d+(?:\.\d+)?) source=(?P<source>[^\]\n]+)\]")
_TAIL = re.compile(r"\s*" + ANNOTATION.pattern + r"\s*$")
_SPAN = re.compile(r"^(?P<path>.+):(?P<first>\d+)-(?P<last>\d+)$")


class SourceLines(NamedTuple):
    """The note lines an entry copies: its annotation's `source=<path>:<first>-<last>`."""

    path: str
    first: int
    last: int


def marker(key: str) -> str:
    return f"<!-- {MARKER_PREFIX}{key} -->"


def section_heading(day: str) -> str:
    return f"## {SECTION_TITLE} ({day})"


def annotation(score: float, recalls: int, avg: float, source: str) -> str:
    return f"[score={score:.3f} recalls={recalls} avg={avg:.3f} source={source}]"


def marker_keys(text: str) -> set[str]:
    """The keys of every marker in `text`."""
    return {m.group(1).strip() for m in MARKER.finditer(text) if m.group(1).strip()}


def marker_key(line: str) -> str | None:
    """The key of a line that is a marker alone, else None."""
    m = MARKER.fullmatch(line.strip())
    return m.group(1).strip() or None if m else None


def entry_recalls(line: str) -> int | None:
    """The recall count of a line that is an entry's bullet ("- … [score=… recalls=N …]" to
    its end), else None."""
    if not line.startswith("- "):
        return None
    m = _TAIL.search(line)
    return int(m.group("recalls")) if m else None


def without_annotation(line: str) -> str:
    """A line without the annotation ending it (the text the entry holds)."""
    return _TAIL.sub("", line)


def annotated_sources(text: str) -> list[SourceLines]:
    """The source lines named by each annotation in `text`, in order."""
    out = []
    for m in ANNOTATION.finditer(text):
        span = _SPAN.match(m.group("source").strip())
        if span:
            out.append(SourceLines(span["path"], int(span["first"]), int(span["last"])))
    return out
