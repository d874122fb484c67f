"""Rehydration: before promoting, find the candidate's text in the note as it is *now*.

Line ranges in the recall store go stale as notes are edited. The stored range is used when it
still holds the stored snippet; otherwise every window of up to max(span + 3, 8) lines is
compared: an exact match beats a window containing the snippet, which beats a window contained
in the snippet; then the nearest start, then the span closest to the original (OpenClaw's
relocation). If nothing matches, the text is gone and the candidate is skipped. Among windows
containing the snippet, one that starts with it wins over a nearer one that does not.

Two tightenings over OpenClaw: a window merely contained in the snippet must cover at least
60 % of it (otherwise one surviving short line of a deleted paragraph would be "promoted"), and
ellipses a search layer put around a cut-out snippet are ignored when comparing. And snippets
built by daily ingestion ("Heading: item; item") are found by rebuilding the note's chunks.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .ingest import build_snippets, strip_managed_blocks
from .markdown_io import read_text
from .snippet_filter import is_unpromotable, normalize_snippet, strip_ellipses

MIN_PARTIAL_COVERAGE = 0.6
_FENCE_START_RE = re.compile(r"<!--\s*openclaw:dreaming:[a-z][a-z0-9-]*:start\s*-->", re.I)
_FENCE_END_RE = re.compile(r"<!--\s*openclaw:dreaming:[a-z][a-z0-9-]*:end\s*-->", re.I)


@dataclass(frozen=True)
class Rehydrated:
    path: str
    start_line: int
    end_line: int
    snippet: str  # the live text of the range, whitespace-collapsed
    moved: bool  # the range differs from the stored one


def source_candidates(path: str) -> list[str]:
    """The stored path, plus `memory/<basename>` for legacy entries stored without the dir."""
    paths = [path]
    if not path.startswith("memory/"):
        paths.append(f"memory/{posixpath.basename(path)}")
    return list(dict.fromkeys(paths))


def rehydrate(workspace: Path, path: str, start_line: int, end_line: int,
              snippet: str) -> Rehydrated | None:
    for candidate in source_candidates(path):
        text = read_text(workspace, candidate)
        if text is None:
            continue
        lines = re.split(r"\r?\n", text)
        found = relocate(lines, start_line, end_line, snippet) \
            or relocate_daily_chunk(lines, start_line, end_line, snippet)
        if found is None:
            continue
        start, end, live = found
        # Text inside an OpenClaw inline dreaming block is scratchwork, never a memory.
        if overlaps_dreaming_fence(lines, start, end):
            continue
        return Rehydrated(candidate, start, end, live,
                          moved=(candidate, start, end) != (path, start_line, end_line))
    return None


def _range_text(norm_lines: Sequence[str], start: int, end: int) -> str:
    return " ".join(part for part in norm_lines[max(0, start - 1):min(len(norm_lines), end)]
                    if part)


def relocate(lines: Sequence[str], start_line: int, end_line: int,
             snippet: str) -> tuple[int, int, str] | None:
    """(start, end, text) of the best live match for `snippet`, or None."""
    norm_lines = [normalize_snippet(line) for line in lines]
    target = strip_ellipses(normalize_snippet(snippet))
    if not target:
        text = _range_text(norm_lines, start_line, end_line)
        return (start_line, end_line, text) if text else None
    exact = _range_text(norm_lines, start_line, end_line)
    if exact == target:
        return start_line, end_line, exact
    preferred_span = max(1, end_line - start_line + 1)
    max_span = min(len(lines), max(preferred_span + 3, 8))
    # Rank: better match, then aligned (the window starts where the snippet starts: search
    # snippets are prefixes of their chunk, so an earlier start only adds unrelated lines),
    # then the nearest start, then the span closest to the original.
    best: tuple[int, int, int, int, int] | None = None
    best_range: tuple[int, int, str] | None = None
    for start_index in range(len(lines)):
        if not norm_lines[start_index]:
            continue  # a range never starts (or ends, below) on a blank line
        window = ""
        for span in range(1, max_span + 1):
            if start_index + span > len(lines):
                break
            part = norm_lines[start_index + span - 1]
            if not part:
                continue
            window = f"{window} {part}" if window else part
            quality = _quality(target, window)
            if not quality:
                continue
            start = start_index + 1
            aligned = 0 if window.startswith(target) else 1
            rank = (-quality, aligned, abs(start - start_line), abs(span - preferred_span),
                    start)
            if best is None or rank < best:
                if is_unpromotable(window):
                    continue
                best, best_range = rank, (start, start_index + span, window)
    return best_range


def relocate_daily_chunk(lines: Sequence[str], start_line: int, end_line: int,
                         snippet: str) -> tuple[int, int, str] | None:
    """Find a snippet daily ingestion built ("Heading: item; item") by rebuilding the chunks.

    Such snippets are not verbatim note text, so window matching alone never finds them
    (OpenClaw issue #87854: rehydration failing for every candidate). The promoted text is
    the chunk's raw lines, not the synthesised form.
    """
    target = normalize_snippet(snippet)
    if not target:
        return None
    span = end_line - start_line
    matches = [c for c in build_snippets(strip_managed_blocks(lines), len(lines) + 1)
               if normalize_snippet(c.snippet) == target]
    if not matches:
        return None
    best = min(matches, key=lambda c: (abs(c.start_line - start_line),
                                       abs((c.end_line - c.start_line) - span)))
    norm_lines = [normalize_snippet(line) for line in lines]
    text = _range_text(norm_lines, best.start_line, best.end_line)
    return (best.start_line, best.end_line, text) if text else None


def _quality(target: str, window: str) -> int:
    if window == target:
        return 3
    if target in window:
        return 2
    if window in target and len(window) >= MIN_PARTIAL_COVERAGE * len(target):
        return 1
    return 0


def overlaps_dreaming_fence(lines: Sequence[str], start_line: int, end_line: int) -> bool:
    if not lines:
        return False
    start = max(1, min(start_line, len(lines)))
    end = max(start, min(end_line, len(lines)))
    inside = False
    for index in range(end):
        line = lines[index]
        if _FENCE_START_RE.search(line):
            inside = True
            continue
        if _FENCE_END_RE.search(line):
            inside = False
            continue
        if inside and index + 1 >= start:
            return True
    return False
