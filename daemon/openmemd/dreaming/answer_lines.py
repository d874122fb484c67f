"""The lines of a recalled chunk that answered the query: what a recall is about.

A search hit is a whole chunk (a day's note can hold the gym, a vendor contract and the boots
that were searched for); promoting the chunk would promote the whole day. So a recall records
only the few lines inside the chunk that carry the query's terms, found by the signal the
keyword search itself uses: the query's terms (`text.tokens.query_terms`) matched per line, up
to inflection (`covered_terms`). No IDF: a recall is judged alone, without the index's
statistics. The smallest window of consecutive non-blank lines holding the most distinct query
terms wins; ties go to the topmost (notes usually state a fact before they elaborate on it).
"""

from __future__ import annotations

from openmemd.text.tokens import covered_terms, query_terms

MAX_ANSWER_LINES = 3


def best_lines(query: str, chunk_text: str, start_line: int,
               max_lines: int = MAX_ANSWER_LINES) -> tuple[int, int] | None:
    """(first, last) line numbers, 1-based like `start_line`, of the lines of `chunk_text` that
    answer `query` best; None when no line holds any query term (the caller keeps the chunk:
    a match by meaning alone gives no line to prefer)."""
    terms = query_terms(query)
    if not terms:
        return None
    lines = chunk_text.split("\n")
    covered = [covered_terms(terms, line) if line.strip() else None for line in lines]
    best: tuple[int, int, int] | None = None  # (terms, -length, -start) compared as a whole
    found = (0, 0)
    for first in range(len(lines)):
        union: set[str] = set()
        for last in range(first, min(len(lines), first + max(1, max_lines))):
            line_terms = covered[last]
            if line_terms is None:
                break  # a blank line ends a paragraph or list: an answer does not span it
            union |= line_terms
            if not union:
                continue
            rank = (len(union), first - last, -first)
            if best is None or rank > best:
                best, found = rank, (first, last)
    if best is None:
        return None
    return start_line + found[0], start_line + found[1]
