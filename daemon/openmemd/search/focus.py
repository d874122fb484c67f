"""The lines inside a hit's chunk that answer best: its `focus`.

A chunk is ~400 tokens (a day of chat is 20-30 lines); a citation of the whole chunk leaves
the reader to find the answer. The focus starts at the chunk's line holding the most query
information -- the IDF-weighted query terms it contains (`evidence.corpus_idf`), ties to the
earlier line -- and takes the FOCUS_FOLLOWING lines after it: the line naming what a question
asks about is often not the one answering it, but the answer follows it (the reply to a
question in a conversation, the body under a heading, the items after "decided:"). When the
last of them is a question, its reply joins the focus: what was asked is answered next
("What made you pick it?" -- "They help LGBTQ+ folks ..."). When the best line is a heading,
the focus starts at the first line under it: a heading names what follows, it does not say it
("## Conversation between Joanna and Nate" holds "Joanna"). How often the evidence falls
inside the focus with each rule, and the rules tried instead, are in docs/benchmarks.md
("Figures behind the code's choices").

Lines are the chunk's own text lines. When they do not map one to one onto the chunk's line
range (a transcript chunk, whose lines come from JSONL line numbers, or a line split because
it was too long), the focus is the whole chunk; when no line holds a query term (a hit by
meaning alone), it is the chunk's body, without the headings and blank lines it starts with
("# 2023-05-08", "## Conversation at 1:56 pm") or the blank lines it ends with
(docs/benchmarks.md, "a focus found by meaning alone is the chunk's body").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from openmemd.text.headings import HEADING

FOCUS_FOLLOWING = 2  # lines after the best line (three lines, four with a reply)


@dataclass(frozen=True)
class Focus:
    start_line: int
    end_line: int


def line_terms(text: str, found: Callable[[str], set[str]]) -> list[set[str]]:
    """The query terms each line of `text` contains (`found` tells for one line)."""
    return [found(line) if line.strip() else set() for line in text.split("\n")]


def asks(line: str) -> bool:
    """Whether a line ends with a question (a trailing "[shared a photo: …]" aside)."""
    return _TRAILING_ASIDE.sub("", line).rstrip(" \t\"'”’)*_").endswith(("?", "？"))


_TRAILING_ASIDE = re.compile(r"\s*\[[^\]]*\]\s*$")


def best_line(lines: Sequence[set[str]], weights: Mapping[str, float]) -> int | None:
    """0-based index of the line holding the most query term weight (the first of equals),
    or None when no line holds a weighted query term."""
    best: tuple[float, int] | None = None
    for i, held in enumerate(lines):
        value = sum(weights.get(t, 0.0) for t in held)
        if value > 0 and (best is None or value > best[0] + 1e-12):
            best = (value, i)
    return None if best is None else best[1]


def focus_of(start_line: int, end_line: int, lines: Sequence[set[str]],
             weights: Mapping[str, float], texts: Sequence[str] = ()) -> Focus:
    """The focus of a chunk of lines `start_line`..`end_line` (`lines`: `line_terms` of its
    text; `texts`: the lines themselves, for the heading and question rules), in file line
    numbers."""
    if len(lines) != end_line - start_line + 1:
        return Focus(start_line, end_line)
    first = best_line(lines, weights)
    if first is None:
        return _body(start_line, end_line, texts)
    if first < len(texts) and HEADING.match(texts[first]):
        # A heading names what follows it; the lines under it are what it says.
        first = next((i for i in range(first + 1, len(texts)) if texts[i].strip()), first)
    last = first + FOCUS_FOLLOWING
    if last < len(texts) - 1 and asks(texts[last]):
        last += 1
    return Focus(start_line + first, min(end_line, start_line + last))


def _body(start_line: int, end_line: int, texts: Sequence[str]) -> Focus:
    """The chunk less the headings and blank lines it starts with and the blank lines it
    ends with: with no line holding a query term, what it says is all of its body."""
    if len(texts) != end_line - start_line + 1:
        return Focus(start_line, end_line)
    first, last = 0, len(texts) - 1
    while first < last and (not texts[first].strip() or HEADING.match(texts[first])):
        first += 1
    while last > first and not texts[last].strip():
        last -= 1
    return Focus(start_line + first, start_line + last)
