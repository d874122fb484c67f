"""A citation as search prints it, taken back: `get` reads what search cites.

Search cites a hit as `path#Lx-Ly` (or `path#Lx`, the JSON `citation`) and the command line
prints it as `path:x-y`; each names a path and a line range. An explicit from/lines given as
well replaces the citation's range as a whole (a citation is the default range, not a second
one to combine with). A range that starts past the end of a file is an error naming how many
lines it has (`past_end`). Only a suffix of exactly these shapes is taken off: no memory file or
transcript name ends in one (they end in `.md`, `.jsonl` or an archive's timestamp).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from openmemd.errors import BadRequestError

_RANGE = re.compile(r"(?:#L([0-9]+)(?:-L?([0-9]+))?|:([0-9]+)(?:-([0-9]+))?)$")
MAX_LINE = 2**31 - 1


@dataclass(frozen=True)
class Cited:
    path: str
    from_line: int | None
    lines: int | None


def _line(ref: str, digits: str) -> int:
    if len(digits) > 10 or int(digits) > MAX_LINE or int(digits) < 1:
        raise BadRequestError(f"{ref[:200]}: line numbers run from 1 to {MAX_LINE}")
    return int(digits)


def parse_citation(ref: str, from_line: int | None = None,
                   lines: int | None = None) -> Cited:
    """`ref` as a path and a range: `path`, `path#Lx`, `path#Lx-Ly`, `path:x` or `path:x-y`."""
    match = _RANGE.search(ref)
    if match is None or match.start() == 0:
        return Cited(ref, from_line, lines)
    first = _line(ref, match.group(1) or match.group(3))
    last_digits = match.group(2) or match.group(4)
    last = _line(ref, last_digits) if last_digits else first
    if last < first:
        raise BadRequestError(f"{ref[:200]}: the range ends (line {last}) before it starts "
                              f"(line {first})")
    path = ref[:match.start()]
    if from_line is not None or lines is not None:
        return Cited(path, from_line, lines)
    return Cited(path, first, last - first + 1)


def past_end(path: str, start: int, total: int) -> None:
    """A range that starts past the end of a file: say how long the file is."""
    if start > max(total, 1):
        raise BadRequestError(f"{path} has {total} line{'' if total == 1 else 's'}; line "
                              f"{start} is past its end")
