"""Watching other agents' session folders (Claude Code's projects, Codex's sessions).

Each folder gets a watcher whose changes reach the indexer as `<source>/<rel>`, the paths the
index holds them under; the indexer reads a grown file only from where it stopped
(`index.agent_sessions.AppendReader`), so no delta gate is needed. A folder that does not exist
yet is left to the periodic reconcile scan.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from openmemd.config import Settings
from openmemd.log import get_logger
from openmemd.server.watcher import Change, ChangeSink, Watcher

log = get_logger(__name__)


class _Prefixed:
    """Watcher sink: folder-relative paths -> `<source>/<rel>`."""

    def __init__(self, sink: ChangeSink, source: str) -> None:
        self._sink, self._source = sink, source

    def submit(self, changes: Sequence[Change]) -> None:
        self._sink.submit([Change(f"{self._source}/{c.path}", c.removed) for c in changes])

    def request_reconcile(self, reason: str) -> None:
        self._sink.request_reconcile(reason)


def watch_agent_sessions(roots: Sequence[tuple[str, Path]], sink: ChangeSink,
                         settings: Settings, name: str, force_polling: bool) -> list[Watcher]:
    """A started watcher on each indexed agent source's session folder (`roots`: (source,
    folder)) that exists."""
    sync = settings.sync
    watchers = []
    for source, root in roots:
        if source not in settings.sources:
            continue
        if not Path(root).is_dir():
            log.info("agent_sessions_missing", agent=name, source=source, root=str(root))
            continue
        watcher = Watcher(root, lambda rel: rel.endswith(".jsonl"), _Prefixed(sink, source),
                          debounce_ms=sync.watch_debounce_ms,
                          force_polling=force_polling or sync.watch_polling,
                          polling_interval=sync.watch_poll_seconds, name=f"{name}-{source}")
        watcher.start()
        log.info("agent_sessions_watch_started", agent=name, source=source, root=str(root))
        watchers.append(watcher)
    return watchers
