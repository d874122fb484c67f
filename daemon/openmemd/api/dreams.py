"""Dreaming, reached through the api: the sweep and its explanations for one workspace, and
the recall recording of each search (the hits dreaming ranks its candidates by, `Recalls`).

The CLI and the daemon call these; neither imports `openmemd.dreaming` itself.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openmemd.config import PHASES, ContextSettings, DreamingSettings
from openmemd.index.scan import ScanScope
from openmemd.log import get_logger

if TYPE_CHECKING:
    from openmemd.dreaming.explain import CandidateExplanation
    from openmemd.dreaming.recall import RecallRecorder
    from openmemd.search.results import SearchHit

log = get_logger(__name__)


def dream(workspace: Path, settings: DreamingSettings, phase: str = "all",
          dry_run: bool = False,
          memory_max_chars: int = ContextSettings().bootstrap_max_chars,
          sources: Sequence[str] = ()) -> dict[str, Any]:
    """Run one phase, or all of them in order (`phase="all"`); the sweep's report as JSON.
    `memory_max_chars`: MEMORY.md's startup budget (context.bootstrap_max_chars). `sources`:
    the indexed sources; those of other agents (Claude Code, Codex) are ingested too."""
    from openmemd.dreaming.sweep import run_sweep

    phases = PHASES if phase == "all" else (phase,)
    scope = agents_scope(workspace, sources)
    sessions = None
    if scope is not None:
        from openmemd.api.session_dreams import sweep_messages

        sessions = sweep_messages(scope, settings.timezone)
    return run_sweep(workspace, settings, phases=phases, dry_run=dry_run,
                     memory_max_chars=memory_max_chars, sessions=sessions).to_dict()


def agents_scope(workspace: Path, sources: Sequence[str]) -> ScanScope | None:
    """Where the other agents' sessions among `sources` are (None: no such source)."""
    from openmemd.index.agent_sessions import AGENT_SOURCES, roots

    agents = tuple(s for s in sources if s in AGENT_SOURCES)
    if not agents:
        return None
    return ScanScope(workspace, agents, agent_roots=roots(agents))


def explain_dream(workspace: Path, selector: str, settings: DreamingSettings,
                  phase: str = "all") -> list[CandidateExplanation]:
    """Recall entries matching a key, a citation as search prints it (`path#L3-L5`,
    `path:3-5`), a path or a text fragment: why a sweep of `phase` would (not) promote them."""
    from openmemd.dreaming.explain import explain
    from openmemd.errors import BadRequestError
    from openmemd.index.lines.cited import parse_citation

    try:
        ref = parse_citation(selector.strip())
    except BadRequestError:  # "line 0": no citation, a text fragment
        ref = None
    cited = None
    if ref is not None and ref.from_line is not None and ref.lines is not None:
        cited = (ref.path, ref.from_line, ref.from_line + ref.lines - 1)
    return explain(workspace, selector, settings, cited=cited,
                   phases=PHASES if phase == "all" else (phase,))


class Recalls:
    """The recall recording of one workspace's searches, started by the first one it records
    (a process that never searches never starts dreaming's recorder)."""

    def __init__(self, workspace: Path, agents: ScanScope | None = None) -> None:
        self.workspace = workspace
        self.agents = agents  # other agents' sessions: a hit of theirs is recalled too
        self._recorder: RecallRecorder | None = None
        self._lock = threading.Lock()  # searches record from many threads

    def record(self, query: str, results: list[SearchHit], timezone: str) -> None:
        from openmemd.dreaming.recall import RecallRecorder, as_hit

        with self._lock:
            if self._recorder is None:
                sessions = None
                if self.agents is not None:
                    from openmemd.api.session_dreams import recalled_messages

                    sessions = recalled_messages(self.agents, timezone)
                self._recorder = RecallRecorder(timezone, sessions=sessions)
            recorder = self._recorder
        # as_hit keeps a hit's `focus` (the lines that answer) when the search gives one.
        recorder.submit(self.workspace, query, [as_hit(r) for r in results])

    def flush(self, timeout: float = 5.0) -> None:
        if self._recorder is not None:
            self._recorder.flush(timeout)

    def close(self) -> None:
        if self._recorder is None:
            return
        try:
            self._recorder.close()
        except Exception as exc:  # never lose the close of the databases to this
            log.warning("recall recorder did not close cleanly", error=str(exc))
