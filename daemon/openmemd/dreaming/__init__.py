"""Dreaming: recall tracking and the nightly light / REM / deep consolidation sweep.

Heuristic and deterministic (no LLM), and file-compatible with OpenClaw's memory-core: the
recall store, phase signals, ingestion checkpoint, lock file, event journal, phase reports,
MEMORY.md promotion sections and the DREAMS.md diary all use OpenClaw's formats.

Public API:
    recall_hit.RecallHit, recall.record_recalls, recall.RecallRecorder   -- called per search
    sweep.run_sweep -> results.SweepResult, sweep.last_sweep         -- the nightly job
    explain.explain -> [explain.CandidateExplanation]                 -- "why (not)?"
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .explain import CandidateExplanation
    from .lockfile import LockTimeoutError
    from .markdown_io import UnsafePathError
    from .recall import RecallRecorder, record_recalls
    from .recall_hit import RecallHit
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

# Each name from its module, imported on first use: a search records its recalls through
# `dreaming.recall` and must not pay for the whole sweep (about 30 ms of imports).
# (`explain` itself is not among them: the name is its module's, `dreaming.explain.explain`.)
_HOME = {"CandidateExplanation": "explain",
         "LockTimeoutError": "lockfile", "UnsafePathError": "markdown_io",
         "RecallHit": "recall_hit", "RecallRecorder": "recall", "record_recalls": "recall",
         "StoreVersionError": "recall_store", "last_sweep": "sweep", "run_sweep": "sweep",
         "DeepSummary": "sweep_report", "LightSummary": "sweep_report",
         "PromotedEntry": "sweep_report", "RemSummary": "sweep_report",
         "SkippedCandidate": "sweep_report", "SweepResult": "sweep_report"}

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
    "last_sweep",
    "record_recalls",
    "run_sweep",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'openmemd.dreaming' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"openmemd.dreaming.{_HOME[name]}"), name)
    globals()[name] = value
    return value
