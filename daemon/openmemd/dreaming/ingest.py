"""Daily ingestion (light phase, step 1): recent dated notes become low-weight "daily" signals.

Top-level `memory/YYYY-MM-DD.md` notes inside the lookback window are cut into small snippet
chunks (heading context + up to 4 list items or paragraph lines) and recorded with score 0.62,
query `__dreaming_daily__:<day>`, day bucket = the note's day. A checkpoint
(`memory/.dreams/daily-ingestion.json`, mtime + size per file) skips unchanged notes. Managed
dreaming blocks that OpenClaw's inline mode leaves in notes are stripped first.

These signals let light sleep stage fresh notes before anyone searched for them; they never
satisfy the promotion gates on their own (see promotion_score.py).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .clock import day_within_lookback, lookback_cutoff
from .layout import DAILY_NOTE_NAME_RE
from .markdown_io import UnsafePathError, read_text, workspace_target
from .recall_hit import RecallHit
from .state import FileFingerprint

DAILY_SCORE = 0.62
MAX_SNIPPET_CHARS = 280
MIN_SNIPPET_CHARS = 8
MAX_CHUNK_LINES = 4

_MANAGED_BLOCKS = (
    ("## Light Sleep", "<!-- openclaw:dreaming:light:start -->",
     "<!-- openclaw:dreaming:light:end -->"),
    ("## REM Sleep", "<!-- openclaw:dreaming:rem:start -->",
     "<!-- openclaw:dreaming:rem:end -->"),
)
_GENERIC_DAY_HEADING_RE = re.compile(
    r"^(?:(?:mon|monday|tue|tues|tuesday|wed|wednesday|thu|thur|thurs|thursday|fri|friday|sat|"
    r"saturday|sun|sunday)(?:,\s+)?)?(?:(?:jan|january|feb|february|mar|march|apr|april|may|"
    r"jun|june|jul|july|aug|august|sep|sept|september|oct|october|nov|november|dec|december)"
    r"\s+\d{1,2}(?:st|nd|rd|th)?(?:,\s*\d{4})?|\d{1,2}[/-]\d{1,2}(?:[/-]\d{2,4})?|"
    r"\d{4}[/-]\d{2}[/-]\d{2})$", re.I)
# OpenClaw's pattern needs a date after a weekday; a bare "Monday" heading is just as generic.
_WEEKDAY_RE = re.compile(r"^(?:mon|monday|tue|tues|tuesday|wed|wednesday|thu|thur|thurs|"
                         r"thursday|fri|friday|sat|saturday|sun|sunday)$", re.I)
_HEADING_RE = re.compile(r"^#{1,6}\s+(.+)$")
_LIST_RE = re.compile(r"^([-*+]\s+|\d+\.\s+)")
_WS_RE = re.compile(r"\s+")


@dataclass(frozen=True)
class DailySnippet:
    """One snippet a daily note is cut into (not an index chunk: `index.chunking.Chunk`)."""

    start_line: int
    end_line: int
    snippet: str


@dataclass(frozen=True)
class DailyBatch:
    day: str
    hits: tuple[RecallHit, ...]

    @property
    def query(self) -> str:
        return f"__dreaming_daily__:{self.day}"


@dataclass(frozen=True)
class Ingestion:
    batches: tuple[DailyBatch, ...]
    checkpoint: Mapping[str, FileFingerprint]
    changed: bool  # the checkpoint must be rewritten
    files_read: int


def _strip_list_marker(line: str) -> str:
    return re.sub(r"^[-*+]\s+", "", re.sub(r"^\d+\.\s+", "", line)).strip()


def _is_generic_heading(heading: str) -> bool:
    text = _WS_RE.sub(" ", heading.strip())
    if not text:
        return True
    if text.lower() in ("today", "yesterday", "tomorrow", "morning", "afternoon", "evening",
                        "night"):
        return True
    return bool(_GENERIC_DAY_HEADING_RE.match(text) or _WEEKDAY_RE.match(text))


def _heading(line: str) -> str | None:
    match = _HEADING_RE.match(line.strip())
    if not match:
        return None
    heading = _strip_list_marker(match.group(1))
    if not heading or DAILY_NOTE_NAME_RE.match(heading) or _is_generic_heading(heading):
        return None
    return _WS_RE.sub(" ", heading[:MAX_SNIPPET_CHARS])


def _line_snippet(line: str) -> str | None:
    text = line.strip()
    if not text or text.startswith(("#", "<!--")):
        return None
    text = _strip_list_marker(text)
    if len(text) < MIN_SNIPPET_CHARS:
        return None
    return _WS_RE.sub(" ", text[:MAX_SNIPPET_CHARS])


def _chunk_text(heading: str | None, lines: Sequence[str], kind: str | None) -> str:
    body = ("; " if kind == "list" else " ").join(lines).strip()
    text = f"{heading}: {body}" if heading else body
    return _WS_RE.sub(" ", text[:MAX_SNIPPET_CHARS]).strip()


def build_snippets(lines: Sequence[str], limit: int) -> list[DailySnippet]:
    """OpenClaw's buildDailySnippetChunks: headings give context, lists and paragraphs group."""
    chunks: list[DailySnippet] = []
    heading: str | None = None
    current: list[str] = []
    kind: str | None = None
    start = end = 0

    def flush() -> None:
        nonlocal current, kind, start, end
        if current:
            text = _chunk_text(heading, current, kind)
            if len(text) >= MIN_SNIPPET_CHARS:
                chunks.append(DailySnippet(start, end, text))
        current, kind, start, end = [], None, 0, 0

    for index, line in enumerate(lines):
        new_heading = _heading(line)
        if new_heading:
            flush()
            heading = new_heading
            continue
        stripped = line.strip()
        snippet = _line_snippet(line) if stripped and not stripped.startswith("<!--") else None
        if snippet is None:
            flush()
            continue
        next_kind = "list" if _LIST_RE.match(stripped) else "paragraph"
        if current and (kind != next_kind or len(current) >= MAX_CHUNK_LINES
                        or len(_chunk_text(heading, [*current, snippet], next_kind))
                        > MAX_SNIPPET_CHARS):
            flush()
        if not current:
            start, kind = index + 1, next_kind
        current.append(snippet)
        end = index + 1
        if len(chunks) >= limit:
            break
    flush()
    return chunks[:limit]


def strip_managed_blocks(lines: Sequence[str]) -> list[str]:
    """Blank out OpenClaw's inline Light/REM blocks (heading + markers + body).

    An unterminated block ends before the next heading or block start, so a broken marker
    cannot swallow the rest of the note.
    """
    by_start = {start: (heading, end) for heading, start, end in _MANAGED_BLOCKS}
    out = list(lines)
    index = 0
    while index < len(out):
        block = by_start.get(out[index].strip())
        if block is None:
            index += 1
            continue
        heading, end_marker = block
        stop = -1
        for cursor in range(index + 1, len(out)):
            text = out[cursor].strip()
            if text == end_marker:
                stop = cursor
                break
            if re.match(r"^#{1,6}\s+", text) or text in by_start:
                stop = cursor - 1
                break
        if stop < index:
            index += 1
            continue
        first = index
        for back in range(index - 1, -1, -1):
            if lines[back].strip():
                if lines[back].strip() == heading:
                    first = back
                break
        for cursor in range(first, stop + 1):
            out[cursor] = ""
        index = stop + 1
    return out


def collect_daily(workspace: Path, checkpoint: Mapping[str, FileFingerprint], *,
                  lookback_days: int, limit: int, now: datetime) -> Ingestion:
    """The daily signals due now and the checkpoint to save afterwards (reads only)."""
    cutoff = lookback_cutoff(now, lookback_days)
    try:
        memory_dir = workspace_target(workspace, "memory")
        entries = list(os.scandir(memory_dir))
    except (OSError, UnsafePathError):
        entries = []
    files = []
    for entry in entries:
        match = DAILY_NOTE_NAME_RE.match(entry.name)
        if not match or not entry.is_file(follow_symlinks=False):
            continue
        if day_within_lookback(match.group(1), cutoff):
            files.append((entry.name, match.group(1)))
    files.sort(key=lambda f: f[1], reverse=True)  # newest first

    total_cap = max(20, limit * 4)
    per_file_cap = max(6, math.ceil(total_cap / max(1, len(files))))
    next_checkpoint: dict[str, FileFingerprint] = {}
    batches: list[DailyBatch] = []
    changed = False
    total = 0
    read = 0
    for name, day in files:
        rel = f"memory/{name}"
        try:
            info = (workspace / rel).lstat()
        except OSError:
            continue
        fingerprint = FileFingerprint(info.st_mtime_ns // 1_000_000, info.st_size)
        next_checkpoint[rel] = fingerprint
        if checkpoint.get(rel) == fingerprint:
            continue
        changed = True
        text = read_text(workspace, rel)
        read += 1
        if not text:
            continue
        lines = strip_managed_blocks(re.split(r"\r?\n", text))
        hits = []
        for chunk in build_snippets(lines, per_file_cap):
            hits.append(RecallHit(rel, chunk.start_line, chunk.end_line, DAILY_SCORE,
                                  chunk.snippet))
            if len(hits) >= per_file_cap or total + len(hits) >= total_cap:
                break
        if hits:
            batches.append(DailyBatch(day, tuple(hits)))
            total += len(hits)
        if total >= total_cap:
            break  # older notes stay out of the checkpoint and are read next sweep
    if not changed and set(checkpoint) != set(next_checkpoint):
        changed = True
    return Ingestion(tuple(batches), next_checkpoint, changed, read)
