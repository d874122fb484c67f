"""`get` of another namespace's hit: its lines as the shared index stores them.

On a shared PostgreSQL store a search also returns other workspaces' hits (their `namespace`);
those files are on other machines, so `get` reads them back from the stored chunks (the text
as indexed: secrets masked, a transcript as its message lines). `totalLines` is then the last
line the index holds, and text no chunk holds (whitespace-only lines) reads as empty lines.

A Markdown chunk holds its lines start..end, one per line; a line longer than a chunk was
stored in pieces, one chunk each, and is joined back from them: the last piece (which shares
its chunk with the next lines) last; the pieces before it have the same line range and no
order of their own, so a line over two chunks long may come back with its middle pieces
swapped. A transcript chunk holds
message lines numbered by their JSONL lines, of which it records only the first and the last:
the chunks overlapping the range are returned whole, the lines they share once, and there is
no `lineNumbers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openmemd.errors import NotFoundError
from openmemd.index.lines.cited import past_end
from openmemd.store.base import StoredChunk


def read_stored(path: str, namespace: str, chunks: Sequence[StoredChunk],
                from_line: int | None, lines: int | None) -> dict[str, Any]:
    if not chunks:
        raise NotFoundError(f"{path}: not in the index of namespace {namespace}")
    total = max(c.end_line for c in chunks)
    start = from_line or 1
    past_end(path, start, total)
    end = min(start + lines - 1, total) if lines is not None else total
    reply = {"path": path, "namespace": namespace, "totalLines": total}
    if chunks[0].source == "sessions":
        wanted = [c for c in chunks if c.end_line >= start and c.start_line <= end]
        merged = _merged(wanted)
        return {**reply, "text": "\n".join(merged),
                "from": wanted[0].start_line if wanted else start, "lines": len(merged)}
    known = _markdown_lines(chunks)
    return {**reply, "text": "\n".join(known.get(n, "") for n in range(start, end + 1)),
            "from": start, "lines": end - start + 1}


def _markdown_lines(chunks: Sequence[StoredChunk]) -> dict[int, str]:
    """Line number -> text, from chunks ordered by (start_line, end_line)."""
    pieces: dict[int, list[str]] = {}
    for c in chunks:
        parts = c.text.split("\n")
        if len(parts) != c.end_line - c.start_line + 1:
            continue  # not one line per line number: never a Markdown chunk
        for offset, part in enumerate(parts):
            seen = pieces.setdefault(c.start_line + offset, [])
            if part not in seen:  # the overlap repeats lines; a long line's pieces differ
                seen.append(part)
    return {n: "".join(p) for n, p in pieces.items()}


def _merged(chunks: Sequence[StoredChunk]) -> list[str]:
    """The chunks' lines in order, the overlap each shares with the one before kept once."""
    out: list[str] = []
    for c in chunks:
        parts = c.text.split("\n")
        shared = next((k for k in range(min(len(out), len(parts)), 0, -1)
                       if out[-k:] == parts[:k]), 0)
        out.extend(parts[shared:])
    return out
