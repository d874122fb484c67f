"""Chunking the curated long-term files by Markdown block: one fact, one chunk.

MEMORY.md (and USER.md when indexed) is a list of short, unrelated facts. Packed into ~400-token
windows, a window holds dozens of them and its vector is their average: "favourite coding
language for fresh code" did not find "The user prefers TypeScript to JavaScript for new
projects." (ranked 7th in a realistic workspace), and the keyword row of such a window matches
every query that shares a word with any of its facts. Here each block is its own chunk, so
each fact has its own vector, its own keyword row and its own citation lines.

A block is a list item (with its continuation lines: a promoted entry's wrapped Source line,
a nested paragraph), a paragraph, a table or a fenced code block. Headings and single-line HTML
comments (dreaming's promotion markers) are not facts: they join the block that follows them,
so the first fact of a section carries its heading as context. A chunk still holds exactly
the file's lines start..end, one per line (what `get`, focus and snippets rely on). A block
longer than the chunk budget is split like any other text (`chunking.chunk_text`).

The files and our index differ from OpenClaw only here: the Markdown is untouched, and
OpenClaw re-chunks it its own way when it indexes it.
"""

from __future__ import annotations

import re

from openmemd.index.chunking import Chunk, DecodeBytes, Encode, chunk_text
from openmemd.text.headings import HEADING

# The files an agent loads at every start (`openmemd.context`) that the index may hold:
# MEMORY.md (memory.md) at the root, USER.md when an extra path names it.
LONG_TERM_FILES = frozenset({"MEMORY.md", "memory.md", "USER.md"})
# Index identity (`index/identity.py`): an index chunked before this rule is rebuilt once.
UNITS = "blocks-v1"

_ITEM = re.compile(r"^\s{0,12}(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def is_long_term(path: str, source: str) -> bool:
    return source == "memory" and path in LONG_TERM_FILES


def block_ranges(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) 0-based line indexes of each block of `lines`, in order."""
    blocks: list[tuple[int, int]] = []
    start: int | None = None  # the current block's first line (its heading, if any)
    body = False  # whether the current block has a fact yet (not only headings/comments)
    fence = ""
    for i, line in enumerate(lines):
        if fence:  # inside a fenced code block: everything up to the closing fence
            if line.strip().startswith(fence):
                fence = ""
            continue
        opening = _FENCE.match(line)
        blank = not line.strip()
        prefix = bool(HEADING.match(line) or _COMMENT.match(line))
        starts = bool(opening or _ITEM.match(line) or prefix)
        if start is not None and body and (blank or starts):
            blocks.append((start, _last_text(lines, start, i - 1)))
            start, body = None, False
        if blank:
            continue
        if start is None:
            start = i
        body = body or not prefix
        if opening:
            fence = opening.group(1)
    if start is not None:
        blocks.append((start, _last_text(lines, start, len(lines) - 1)))
    return blocks


def _last_text(lines: list[str], first: int, last: int) -> int:
    while last > first and not lines[last].strip():
        last -= 1
    return last


def chunk_blocks(text: str, *, tokens: int, overlap: int, encode: Encode,
                 decode_bytes: DecodeBytes) -> list[Chunk]:
    """The chunks of a long-term file: one per block (more for a block over `tokens`)."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    chunks: list[Chunk] = []
    for first, last in block_ranges(lines):
        chunks += chunk_text("\n".join(lines[first:last + 1]), tokens=tokens, overlap=overlap,
                             encode=encode, decode_bytes=decode_bytes,
                             line_numbers=range(first + 1, last + 2))
    return chunks
