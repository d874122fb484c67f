"""Snippets (bounded chunk text) and citations (`path#Lstart-Lend`)."""

from __future__ import annotations

import unicodedata

from openmemd.text.tokens import CJK_RUN

SNIPPET_MAX_CHARS = 700

_ZWJ = "\u200d"


def _joins_previous(ch: str) -> bool:
    """True if `ch` belongs to the grapheme before it (cutting before it would split one)."""
    if unicodedata.combining(ch) or ch == _ZWJ:
        return True
    code = ord(ch)
    return (
        0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0xE0100 <= code <= 0xE01EF  # variation selectors supplement
        or 0x1F3FB <= code <= 0x1F3FF  # emoji skin-tone modifiers
        or 0xE0020 <= code <= 0xE007F  # emoji tag sequences (subdivision flags)
        or unicodedata.category(ch) in ("Mn", "Mc", "Me")
    )


def _is_regional_indicator(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def truncate(text: str, limit: int = SNIPPET_MAX_CHARS) -> str:
    """At most `limit` characters of `text`, cut on a grapheme boundary.

    Never leaves a lone surrogate, a base letter without its combining marks, half of a ZWJ
    emoji sequence or half of a flag (regional-indicator pair).
    """
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    cut = limit
    # Back off while the first dropped character still belongs to the last kept one.
    while cut > 0 and (_joins_previous(text[cut]) or text[cut - 1] == _ZWJ
                       or 0xDC00 <= ord(text[cut]) <= 0xDFFF):
        cut -= 1
    # Regional indicators pair up left to right: an odd run before the cut splits a flag.
    run = 0
    while cut - run - 1 >= 0 and _is_regional_indicator(text[cut - run - 1]):
        run += 1
    if run % 2 == 1 and cut < len(text) and _is_regional_indicator(text[cut]):
        cut -= 1
    if cut > 0 and 0xD800 <= ord(text[cut - 1]) <= 0xDBFF:  # lone high surrogate at the end
        cut -= 1
    return text[:cut]


def make_snippet(text: str, limit: int = SNIPPET_MAX_CHARS,
                 focus: tuple[int, int] | None = None) -> str:
    """At most `limit` characters of `text`: all of it when it fits; else a window centred on
    the `focus` lines (0-based indexes into `text`'s lines; None: the start), starting at a
    line's start where one lies before the focus in the window, and cut at word boundaries so
    no word is split (a single word longer than the window is cut on a grapheme boundary)."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    first, last = focus if focus is not None else (0, 0)
    lines = text.split("\n")
    begin = sum(len(line) + 1 for line in lines[:first])
    end = min(len(text), begin + len("\n".join(lines[first:last + 1])))
    if end - begin >= limit:  # the focus alone fills the snippet: keep its start
        return _cut_end(text[begin:], limit)
    spare = limit - (end - begin)
    start = max(0, min(begin - spare // 2, len(text) - limit))
    if start > 0 and text[start - 1] != "\n":
        # Whole lines before the focus where one starts in the window ("- Dinner with Alex"
        # reads, "beans; the grinder needs cleaning." does not); else the first whole word.
        line_start = text.find("\n", start, begin - 1)
        start = line_start + 1 if line_start >= 0 else _word_start(text, start, begin)
    return _cut_end(text[start:], limit)


def _boundary(text: str, at: int) -> bool:
    """Whether `at` lies between two words: next to a space, or to a CJK character (written
    without spaces, each one may end a snippet) that no combining mark follows."""
    before, after = text[at - 1], text[at]
    if before.isspace() or after.isspace():
        return True
    return bool((CJK_RUN.match(before) or CJK_RUN.match(after)) and not _joins_previous(after))


def _word_start(text: str, at: int, latest: int) -> int:
    """The first word start at or after `at` (never past `latest`, the focus)."""
    while at < latest and not _boundary(text, at):
        at += 1
    while at < latest and text[at].isspace():
        at += 1
    return at


def _cut_end(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters after a whole word (trailing space dropped).
    A "word" longer than half the limit (a pasted hash or URL) is cut on a grapheme."""
    if len(text) <= limit:
        return text
    cut = limit
    while cut > limit // 2 and not _boundary(text, cut):
        cut -= 1
    if cut <= limit // 2:
        return truncate(text, limit)
    return text[:cut].rstrip()


def citation(path: str, start_line: int, end_line: int) -> str:
    """`path#Lstart-Lend`, or `path#Lstart` for a single line."""
    if end_line == start_line:
        return f"{path}#L{start_line}"
    return f"{path}#L{start_line}-L{end_line}"
