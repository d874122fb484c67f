"""MEMORY.md editing for promotion: markers, the dated section, and the size cap.

The section format is OpenClaw's, byte for byte (`text/promotion.py`, the one grammar every
reader of it shares), appended after a blank line.

The text is the few lines that answered the searches (one fact an entry), cut to
`max_promoted_snippet_tokens`; `Source: path#Lx-Ly` is OpenClaw's citation form, which its
later versions keep in MEMORY.md. One marker per entry is what makes promotion idempotent
across both tools: a key that already has a marker is never appended again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from openmemd.index.tiktoken_offline import get_encoding
from openmemd.text.promotion import (
    annotation,
    marker,
    section_heading,
    without_annotation,
)

from .snippet_filter import normalize_snippet

NEW_FILE_HEADER = "# Long-Term Memory\n\n"
_LEADING_MARKUP_RE = re.compile(r"^(?:(?:[-*+>]|\d+[.)]|#{1,6}|\[[ xX]\])\s+)+")


@dataclass(frozen=True)
class SectionEntry:
    key: str
    text: str
    score: float
    recalls: int
    avg: float
    source: str  # path:start-end

    def lines(self) -> tuple[str, str]:
        path, _, span = self.source.rpartition(":")
        first, _, last = span.partition("-")
        cite = citation(path, int(first), int(last or first))
        return (marker(self.key),
                f"- {self.text or '(no snippet captured)'} Source: {cite} "
                + annotation(self.score, self.recalls, self.avg, self.source))


def contains_text(memory_text: str, snippet: str) -> bool:
    """True if the (whitespace-normalised) snippet already appears in MEMORY.md.

    Catches the same words promoted under another key (the note was edited and the line range
    moved) and text the user copied into MEMORY.md by hand.
    """
    return in_haystack(memory_haystack(memory_text), snippet)


def memory_haystack(memory_text: str) -> str:
    """MEMORY.md normalised once for many `in_haystack` checks (a sweep checks each candidate;
    normalising a 200 KB file per candidate made a sweep take seconds)."""
    return normalize_snippet(_strip_annotations(memory_text))


def in_haystack(haystack: str, snippet: str) -> bool:
    needle = normalize_snippet(snippet)
    return bool(needle) and needle in haystack


def _strip_annotations(text: str) -> str:
    return "\n".join(without_annotation(line) for line in text.splitlines())


def build_section(entries: Sequence[SectionEntry], day: str) -> str:
    lines = ["", section_heading(day), ""]
    for entry in entries:
        lines.extend(entry.lines())
    lines.append("")
    return "\n".join(lines)


def compose(existing: str, entries: Sequence[SectionEntry], day: str) -> str:
    """MEMORY.md after appending one section (OpenClaw's exact concatenation)."""
    header = NEW_FILE_HEADER if not existing.strip() else ""
    base = existing if not existing or existing.endswith("\n") else existing + "\n"
    return f"{header}{base}{build_section(entries, day)}"


def clean_text(snippet: str) -> str:
    """The note text for a promotion bullet: without the note's own leading list, quote or
    heading marker (OpenClaw writes "- - item"; the marker adds nothing in MEMORY.md)."""
    cleaned = _LEADING_MARKUP_RE.sub("", normalize_snippet(snippet))
    return cleaned or normalize_snippet(snippet)


def truncate_tokens(text: str, max_tokens: int) -> str:
    """Cut promoted text longer than `max_tokens` cl100k_base tokens (the chunker's
    encoder) at a word boundary, marked with "…" (0 = never cut)."""
    if max_tokens <= 0:
        return text
    encoding = get_encoding()
    tokens = encoding.encode(text, disallowed_special=())
    if len(tokens) <= max_tokens:
        return text
    keep = max_tokens - 1  # one token of room for the "…"
    # A token prefix can end inside a character (errors="ignore" drops the partial one) or
    # inside a word (then back off to the last space, unless that loses half the text).
    cut = encoding.decode(tokens[:keep], errors="ignore")
    rest = encoding.decode(tokens[keep:], errors="ignore")
    if cut and rest and not cut[-1].isspace() and not rest[0].isspace():
        space = cut.rfind(" ")
        if space >= len(cut) // 2:
            cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def citation(path: str, first: int, last: int) -> str:
    """OpenClaw's `path#Lx-Ly` (`path#Lx` for one line)."""
    return f"{path}#L{first}" if first == last else f"{path}#L{first}-L{last}"


def size_bytes(text: str) -> int:
    return len(text.encode("utf-8"))
