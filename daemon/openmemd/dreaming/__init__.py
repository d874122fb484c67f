"""Dreaming: recall tracking and the nightly light / REM / deep consolidation sweep.

Heuristic and deterministic (no LLM), and file-compatible with OpenClaw's memory-core: the
recall store, phase signals, ingestion checkpoint, lock file, event journal, phase reports,
MEMORY.md promotion sections and the DREAMS.md diary all use OpenClaw's formats.

Public API:
    recall.RecallHit, recall.record_recalls, recall.RecallRecorder   -- called per search
    sweep.run_sweep -> results.SweepResult, sweep.last_sweep         -- the nightly job
    explain.explain -> [explain.CandidateExplanation]                 -- "why (not)?"
"""

from __future__ import annotations

from .explain import CandidateExplanation, explain
from .lockfile import LockTimeoutError
from .markdown_io import UnsafePathError
from .recall import RecallHit, RecallRecorder, record_recalls
from .recall_store import StoreVersionError
from .sweep import last_sweep, run_sweep
from .sweep_report import (
    DeepSummary,
    LightSummary,
    PromotedEntry,
    RemSummary,
    SkippedCandidate,
    SweepResult,
)

__all__ = [
    "CandidateExplanation",
    "DeepSummary",
    "LightSummary",
    "LockTimeoutError",
    "PromotedEntry",
    "RecallHit",
    "RecallRecorder",
    "RemSummary",
    "SkippedCandidate",
    "StoreVersionError",
    "SweepResult",
    "UnsafePathError",
    "explain",
    "last_sweep",
    "record_recalls",
    "run_sweep",
]
