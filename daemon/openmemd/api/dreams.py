"""Dreaming, reached through the api: the sweep and its explanations for one workspace, and
the recall recording of each search (the hits dreaming ranks its candidates by).

The CLI and the daemon call these; neither imports `openmemd.dreaming` itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from openmemd.config import PHASES, DreamingSettings, Settings

if TYPE_CHECKING:
    from openmemd.api.memory_index import SearchResult
    from openmemd.dreaming.explain import CandidateExplanation
    from openmemd.dreaming.recall import RecallRecorder


def dream(workspace: Path, settings: DreamingSettings, phase: str = "all",
          dry_run: bool = False) -> dict[str, Any]:
    """Run one phase, or all of them in order (`phase="all"`); the sweep's report as JSON."""
    from openmemd.dreaming.sweep import run_sweep

    phases = PHASES if phase == "all" else (phase,)
    return run_sweep(workspace, settings, phases=phases, dry_run=dry_run).to_dict()


def explain_dream(workspace: Path, selector: str, settings: DreamingSettings
                  ) -> list[CandidateExplanation]:
    """Recall entries matching a key, a path or a text fragment: why they are (not) promoted."""
    from openmemd.dreaming.explain import explain

    return explain(workspace, selector, settings)


class DreamingAccess:
    """`MemoryIndex`'s side of dreaming: recording recalls, and the sweep on its workspace."""

    settings: Settings
    workspace: Path
    _recorder: RecallRecorder | None

    def _record(self, query: str, results: list[SearchResult]) -> None:
        try:
            from openmemd.dreaming.recall import RecallHit, RecallRecorder
        except ImportError:  # pragma: no cover - dreaming is part of the package
            return
        if self._recorder is None:
            self._recorder = RecallRecorder(self.settings.dreaming.timezone)
        self._recorder.submit(self.workspace, query, [
            RecallHit(r.path, r.start_line, r.end_line, r.score, r.snippet, r.source)
            for r in results])

    def flush_recalls(self, timeout: float = 5.0) -> None:
        if self._recorder is not None:
            self._recorder.flush(timeout)

    def dream(self, phase: str = "all", dry_run: bool = False) -> dict[str, Any]:
        return dream(self.workspace, self.settings.dreaming, phase, dry_run)

    def explain_dream(self, selector: str) -> list[CandidateExplanation]:
        return explain_dream(self.workspace, selector, self.settings.dreaming)
