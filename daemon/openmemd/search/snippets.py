"""Snippets (bounded chunk text) and citations (`path#Lstart-Lend`)."""

from __future__ import annotations

import unicodedata

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


def make_snippet(text: str, limit: int = SNIPPET_MAX_CHARS) -> str:
    return truncate(text, limit)


def citation(path: str, start_line: int, end_line: int) -> str:
    """`path#Lstart-Lend`, or `path#Lstart` for a single line."""
    if end_line == start_line:
        return f"{path}#L{start_line}"
    return f"{path}#L{start_line}-L{end_line}"
