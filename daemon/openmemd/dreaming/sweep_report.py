"""What a sweep reports: frozen records with JSON-friendly `to_dict()` (CLI --json, socket)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PromotedEntry:
    """One entry appended to MEMORY.md, with the evidence for it."""

    key: str
    path: str
    start_line: int
    end_line: int
    text: str  # as written to MEMORY.md
    score: float
    components: dict[str, float]
    phase_boost: float
    recalls: int  # organic recalls (search + grounded): what the gate counted
    daily_signals: int
    avg_score: float
    queries: int
    days: int
    moved: bool = False  # rehydrated from a different line range than recorded

    @property
    def source(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "path": self.path, "startLine": self.start_line,
                "endLine": self.end_line, "text": self.text, "score": round(self.score, 6),
                "components": {k: round(v, 6) for k, v in self.components.items()},
                "phaseBoost": round(self.phase_boost, 6), "recalls": self.recalls,
                "dailySignals": self.daily_signals, "avgScore": round(self.avg_score, 6),
                "queries": self.queries, "days": self.days, "moved": self.moved}


@dataclass(frozen=True)
class SkippedCandidate:
    """An eligible entry that was not promoted this sweep, and why."""

    key: str
    path: str
    start_line: int
    end_line: int
    score: float
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "path": self.path, "startLine": self.start_line,
                "endLine": self.end_line, "score": round(self.score, 6), "reason": self.reason}


@dataclass(frozen=True)
class LightSummary:
    ran: bool = False
    ingested_files: int = 0
    ingested_snippets: int = 0
    staged: int = 0
    report_path: str | None = None
    examples: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"ran": self.ran, "ingestedFiles": self.ingested_files,
                "ingestedSnippets": self.ingested_snippets, "staged": self.staged,
                "reportPath": self.report_path}


@dataclass(frozen=True)
class RemSummary:
    ran: bool = False
    ingested_snippets: int = 0
    entries: int = 0
    themes: tuple[tuple[str, float], ...] = ()
    truths: tuple[str, ...] = ()
    report_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ran": self.ran, "ingestedSnippets": self.ingested_snippets,
                "entries": self.entries,
                "themes": [{"tag": t, "strength": round(s, 6)} for t, s in self.themes],
                "truths": len(self.truths), "reportPath": self.report_path}


@dataclass(frozen=True)
class DeepSummary:
    ran: bool = False
    eligible: int = 0
    promoted: tuple[PromotedEntry, ...] = ()
    reconciled: int = 0
    skipped: tuple[SkippedCandidate, ...] = ()
    size_capped: bool = False
    left_for_later: int = 0
    memory_bytes: int = 0
    max_memory_bytes: int = 0
    report_path: str | None = None
    backup_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ran": self.ran, "eligible": self.eligible, "promoted": len(self.promoted),
                "reconciled": self.reconciled,
                "skipped": [s.to_dict() for s in self.skipped],
                "sizeCapped": self.size_capped, "leftForLater": self.left_for_later,
                "memoryBytes": self.memory_bytes, "maxMemoryBytes": self.max_memory_bytes,
                "reportPath": self.report_path, "backupPath": self.backup_path}


@dataclass(frozen=True)
class SweepResult:
    """The outcome of one `run_sweep`. Paths are workspace-relative, forward slashes."""

    workspace: str
    day: str  # the sweep's day in the dreaming timezone
    timezone: str
    started_at: str  # ISO UTC
    dry_run: bool
    phases: tuple[str, ...]  # phases that ran
    light: LightSummary = field(default_factory=LightSummary)
    rem: RemSummary = field(default_factory=RemSummary)
    deep: DeepSummary = field(default_factory=DeepSummary)
    report_paths: tuple[str, ...] = ()  # written (or, in a dry run, that would be)
    diary_path: str | None = None
    messages: tuple[str, ...] = ()

    @property
    def promoted(self) -> tuple[PromotedEntry, ...]:
        return self.deep.promoted

    def to_dict(self) -> dict[str, Any]:
        return {"workspace": self.workspace, "day": self.day, "timezone": self.timezone,
                "startedAt": self.started_at, "dryRun": self.dry_run,
                "phases": list(self.phases), "light": self.light.to_dict(),
                "rem": self.rem.to_dict(), "deep": self.deep.to_dict(),
                "promoted": [p.to_dict() for p in self.promoted],
                "reportPaths": list(self.report_paths), "diaryPath": self.diary_path,
                "messages": list(self.messages)}
