"""MEMORY.md entry by entry, each promoted one with why it is there; and the dreaming files
(DREAMS.md, the phase reports) newest first. Read-only."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmemd.config import DreamingSettings
from openmemd.text.promotion import ANNOTATION, marker_key, without_annotation

from .demotion import digest, section_of
from .diary import diary_rel_path
from .layout import MEMORY_FILE, REPORTS_DIR
from .markdown_io import read_text
from .memory_archive import promoted_blocks

MAX_FILE_CHARS = 64_000  # a dreaming file's text is cut there (its newest part kept)
MAX_REPORTS = 30
_DAY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SOURCE_RE = re.compile(r"\sSource:\s*(\S+)\s*$")


@dataclass(frozen=True)
class Entry:
    """One line of MEMORY.md that says something: a heading, a note, or a promoted entry
    (then with its annotation and, from the recall store, what earned it)."""

    kind: str  # "heading" | "note" | "promoted"
    line: int  # 1-based
    text: str
    key: str | None = None
    digest: str | None = None
    section: str | None = None  # "## Promoted From Short-Term Memory (day)"
    source: str | None = None  # the note lines, `path#Lx-Ly`
    score: float | None = None
    recalls: int | None = None
    avg_score: float | None = None
    promoted_at: str | None = None
    queries: tuple[str, ...] = ()
    recall_days: tuple[str, ...] = ()
    unique_queries: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "line": self.line, "text": self.text, "key": self.key,
                "digest": self.digest, "section": self.section, "source": self.source,
                "score": self.score, "recalls": self.recalls, "avgScore": self.avg_score,
                "promotedAt": self.promoted_at, "queries": list(self.queries),
                "recallDays": list(self.recall_days), "uniqueQueries": self.unique_queries}


@dataclass(frozen=True)
class MemoryView:
    path: str
    exists: bool
    chars: int
    size: int  # bytes
    budget_chars: int
    entries: tuple[Entry, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "exists": self.exists, "chars": self.chars,
                "bytes": self.size, "budgetChars": self.budget_chars,
                "entries": [e.to_dict() for e in self.entries]}


def memory_view(workspace: Path, settings: DreamingSettings, budget_chars: int) -> MemoryView:
    ws = Path(workspace)
    text = read_text(ws, MEMORY_FILE)
    if text is None:
        return MemoryView(MEMORY_FILE, False, 0, 0, budget_chars)
    lines = text.split("\n")
    blocks = {b.line: b for b in promoted_blocks(text)}
    why = _explained(ws, settings, {b.key for b in blocks.values()})
    entries: list[Entry] = []
    skip = -1
    for i, line in enumerate(lines):
        if i == skip or not line.strip() or (marker_key(line) and i not in blocks):
            continue
        block = blocks.get(i)
        if block is not None:
            skip = i + 1
            entries.append(_promoted(lines, block.line, block.key, block.text, why))
        else:
            entries.append(Entry("heading" if line.startswith("#") else "note", i + 1, line))
    return MemoryView(MEMORY_FILE, True, len(text), len(text.encode("utf-8")), budget_chars,
                      tuple(entries))


def _promoted(lines: list[str], at: int, key: str, block_text: str,
              why: dict[str, Any]) -> Entry:
    bullet = lines[at + 1]
    annotation = ANNOTATION.search(bullet)
    text = without_annotation(bullet).removeprefix("- ")
    cited = _SOURCE_RE.search(text)
    explained = why.get(key)
    signals = explained.signals if explained is not None else {}
    return Entry(
        "promoted", at + 2, _SOURCE_RE.sub("", text), key=key, digest=digest(block_text),
        section=section_of(lines, at), source=cited.group(1) if cited else None,
        score=float(annotation["score"]) if annotation else None,
        recalls=int(annotation["recalls"]) if annotation else None,
        avg_score=float(annotation["avg"]) if annotation else None,
        promoted_at=explained.promoted_at if explained is not None else None,
        queries=tuple(explained.queries) if explained is not None else (),
        recall_days=tuple(signals.get("recallDays", ())),
        unique_queries=signals.get("uniqueQueries"))


def _explained(ws: Path, settings: DreamingSettings, keys: set[str]) -> dict[str, Any]:
    """`dream explain` of each promoted key still in the recall store."""
    if not keys:
        return {}
    from .explain import explain

    return {c.key: c for c in explain(ws, "", settings) if c.key in keys}


@dataclass(frozen=True)
class DreamsFile:
    path: str
    phase: str | None  # None: the diary
    day: str | None
    text: str
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "phase": self.phase, "day": self.day, "text": self.text,
                "truncated": self.truncated}


def dreams_files(workspace: Path) -> tuple[DreamsFile | None, tuple[DreamsFile, ...]]:
    """The diary, and the phase reports newest first (at most MAX_REPORTS)."""
    ws = Path(workspace)
    rel = diary_rel_path(ws)
    text = read_text(ws, rel)
    diary = _file(rel, None, None, text) if text is not None else None
    found: list[tuple[str, str]] = []
    root = ws / REPORTS_DIR
    if root.is_dir() and not root.is_symlink():
        for phase_dir in sorted(root.iterdir()):
            if phase_dir.is_dir() and not phase_dir.is_symlink():
                found += [(p.stem, phase_dir.name) for p in phase_dir.glob("*.md")
                          if _DAY_RE.match(p.stem)]
    found.sort(key=lambda f: (f[0], f[1]), reverse=True)
    reports = []
    for day, phase in found[:MAX_REPORTS]:
        path = f"{REPORTS_DIR}/{phase}/{day}.md"
        body = read_text(ws, path)
        if body is not None:
            reports.append(_file(path, phase, day, body))
    return diary, tuple(reports)


def _file(path: str, phase: str | None, day: str | None, text: str) -> DreamsFile:
    if len(text) <= MAX_FILE_CHARS:
        return DreamsFile(path, phase, day, text)
    return DreamsFile(path, phase, day, text[-MAX_FILE_CHARS:], truncated=True)
