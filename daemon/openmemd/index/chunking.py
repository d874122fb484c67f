"""Splitting a file into overlapping chunks on line boundaries, measured in tokens.

Pure functions: text in, chunks out. Every chunk records the 1-based first and last line its text
comes from; a line longer than the budget is split into pieces that keep its line number.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Encodes one string to token ids (tiktoken's `encode_ordinary`): ordinary encoding, so a
# literal "<|endoftext|>" in a note is just text. (`encode_ordinary_batch` starts a thread pool
# per call, which costs more than it saves on the few lines of a note.)
Encode = Callable[[str], list[int]]
DecodeBytes = Callable[[list[int]], bytes]


@dataclass(frozen=True)
class Chunk:
    start_line: int
    end_line: int
    text: str
    hash: str


@dataclass(frozen=True)
class _Segment:
    line: int
    text: str
    cost: int  # tokens, plus one for the newline that joins it to the next segment


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chunk_text(text: str, *, tokens: int, overlap: int, encode: Encode,
               decode_bytes: DecodeBytes, line_numbers: Sequence[int] | None = None
               ) -> list[Chunk]:
    """Chunk `text` into pieces of at most `tokens` tokens with about `overlap` tokens repeated.

    `line_numbers`, when given, maps each line of `text` (by index) to the line number to
    report, e.g. the JSONL line a rendered session message came from.
    """
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()  # the final newline does not start another line
    if not lines or (line_numbers is not None and not line_numbers):
        return []  # a transcript with no message renders to no line at all
    numbers = list(line_numbers) if line_numbers is not None else list(range(1, len(lines) + 1))
    encoded = [encode(line) if line else [] for line in lines]
    segments: list[_Segment] = []
    for line_no, line, ids in zip(numbers, lines, encoded, strict=True):
        if len(ids) <= tokens - 1:
            segments.append(_Segment(line_no, line, len(ids) + 1))
        else:
            for piece, cost in _split_long_line(ids, tokens - 1, decode_bytes):
                segments.append(_Segment(line_no, piece, cost + 1))
    return _pack(segments, tokens, overlap)


def _split_long_line(ids: list[int], budget: int, decode_bytes: DecodeBytes
                     ) -> list[tuple[str, int]]:
    """Split one over-long line into pieces of ≤ budget tokens without breaking a character."""
    pieces: list[tuple[str, int]] = []
    pending = b""
    start = 0
    budget = max(1, budget)
    while start < len(ids):
        window = ids[start:start + budget]
        raw = pending + decode_bytes(window)
        text, rest = _decode_prefix(raw)
        # A character cut between two windows is carried into the next piece whole.
        pending = rest
        if text:
            pieces.append((text, len(window)))
        start += budget
    if pending:
        pieces.append((pending.decode("utf-8", errors="replace"), 1))
    return pieces


def _decode_prefix(raw: bytes) -> tuple[str, bytes]:
    for cut in range(len(raw), max(len(raw) - 4, -1), -1):
        try:
            return raw[:cut].decode("utf-8"), raw[cut:]
        except UnicodeDecodeError:
            continue
    return raw.decode("utf-8", errors="replace"), b""


def _pack(segments: list[_Segment], tokens: int, overlap: int) -> list[Chunk]:
    chunks: list[Chunk] = []
    current: list[_Segment] = []
    size = 0
    for seg in segments:
        if current and size + seg.cost > tokens:
            chunks.append(_make_chunk(current))
            current = _overlap_tail(current, overlap)
            size = sum(s.cost for s in current)
            # The carried tail plus a large segment may not fit; drop the tail then.
            if size + seg.cost > tokens:
                current, size = [], 0
        current.append(seg)
        size += seg.cost
    if current:
        chunks.append(_make_chunk(current))
    return [c for c in chunks if c.text.strip()]


def _overlap_tail(segments: list[_Segment], overlap: int) -> list[_Segment]:
    """The trailing whole segments whose total cost stays within `overlap` tokens."""
    tail: list[_Segment] = []
    total = 0
    for seg in reversed(segments):
        if total + seg.cost > overlap:
            break
        tail.append(seg)
        total += seg.cost
    tail.reverse()
    return tail


def _make_chunk(segments: list[_Segment]) -> Chunk:
    text = "\n".join(s.text for s in segments)
    return Chunk(segments[0].line, segments[-1].line, text, sha256_hex(text))


def chunk_id(source: str, path: str, start_line: int, end_line: int, chunk_hash: str,
             model: str) -> str:
    """OpenClaw's chunk id, so ids agree between the two tools."""
    return sha256_hex(f"{source}:{path}:{start_line}:{end_line}:{chunk_hash}:{model}")


def chunk_ids(source: str, path: str, chunks: Sequence[Chunk], model: str) -> list[str]:
    """One id per chunk, distinct within the file.

    OpenClaw's id is kept wherever it is unique. It is not when identical text sits in the same
    line range: pieces of one long line that repeats (`'ha ' * 3000`) share line numbers and
    hash. The 2nd, 3rd, … such piece gets the occurrence number appended to the hashed key, so
    ids stay deterministic and the first occurrence keeps OpenClaw's id.
    """
    ids: list[str] = []
    seen: dict[str, int] = {}
    for c in chunks:
        cid = chunk_id(source, path, c.start_line, c.end_line, c.hash, model)
        n = seen.get(cid, 0) + 1
        seen[cid] = n
        if n > 1:
            cid = sha256_hex(f"{source}:{path}:{c.start_line}:{c.end_line}:{c.hash}:{model}:{n}")
        ids.append(cid)
    return ids
