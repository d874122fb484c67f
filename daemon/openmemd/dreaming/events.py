"""OpenClaw's memory event journal, `memory/.dreams/events.jsonl` (one JSON object a line).

Same event types and fields as OpenClaw's host SDK. One addition: past 8 MiB the journal is
rotated to `events.jsonl.1`, because every search appends a line and a daemon runs for months.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .layout import EVENTS_PATH
from .markdown_io import append_lines, read_text

ROTATE_BYTES = 8 * 1024 * 1024


def recall_recorded(query: str, results: Sequence[Mapping[str, Any]],
                    now_iso: str) -> dict[str, Any]:
    return {"type": "memory.recall.recorded", "timestamp": now_iso, "query": query,
            "resultCount": len(results), "results": [dict(r) for r in results]}


def promotion_applied(memory_path: Path, candidates: Sequence[Mapping[str, Any]],
                      now_iso: str) -> dict[str, Any]:
    return {"type": "memory.promotion.applied", "timestamp": now_iso,
            "memoryPath": str(memory_path), "applied": len(candidates),
            "candidates": [dict(c) for c in candidates]}


def dream_completed(phase: str, report_path: Path, line_count: int, now_iso: str) -> dict[str, Any]:
    return {"type": "memory.dream.completed", "timestamp": now_iso, "phase": phase,
            "reportPath": str(report_path), "lineCount": line_count, "storageMode": "separate"}


def append_events(workspace: Path, events: Iterable[Mapping[str, Any]]) -> None:
    lines = [json.dumps(event, ensure_ascii=False, separators=(",", ":")) for event in events]
    if lines:
        append_lines(workspace, EVENTS_PATH, lines, rotate_bytes=ROTATE_BYTES)


def recall_queries(workspace: Path) -> dict[tuple[str, int, int], tuple[str, ...]]:
    """The searches the journal (and its rotated predecessor) shows recalling each
    (path, startLine, endLine), distinct, oldest first: why a line is a candidate, for
    `dream explain`. Dreaming's own ingestion (`__dreaming_…` queries) is not a search;
    a line that is not JSON (a write cut short) is skipped."""
    found: dict[tuple[str, int, int], dict[str, None]] = {}
    for rel in (f"{EVENTS_PATH}.1", EVENTS_PATH):
        for line in (read_text(workspace, rel) or "").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if not isinstance(event, dict) or event.get("type") != "memory.recall.recorded":
                continue
            query = event.get("query")
            if not isinstance(query, str) or query.startswith("__dreaming_"):
                continue
            for result in event.get("results") or ():
                if not isinstance(result, dict):
                    continue
                start, end = result.get("startLine"), result.get("endLine")
                if isinstance(start, int) and isinstance(end, int):
                    found.setdefault((str(result.get("path")), start, end), {})[query] = None
    return {at: tuple(queries) for at, queries in found.items()}
