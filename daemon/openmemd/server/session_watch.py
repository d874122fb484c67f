"""Watching a transcripts folder outside the workspace (OpenClaw's `<stateDir>/agents/<id>/
sessions/`), with OpenClaw's delta rule.

An agent appends to its transcript after every message; re-indexing it each time would keep
the writer busy for nothing. A growing transcript is handed to the indexer only once it has
grown by `sync.session_delta_bytes` bytes or `sync.session_delta_messages` lines since it was
last handed over (0 = any growth); a truncated, replaced or removed transcript goes at once.
What stays below the threshold is caught by the periodic reconcile scan.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from openmemd.index.safeopen import open_beneath
from openmemd.index.transcripts import PREFIX, is_transcript_name
from openmemd.log import get_logger
from openmemd.server.watcher import Change, ChangeSink, Watcher

log = get_logger(__name__)

READ_CHUNK = 64 * 1024


class SessionDelta:
    """Per transcript: size last handed over, bytes and lines appended since."""

    def __init__(self, root: Path, delta_bytes: int, delta_messages: int) -> None:
        self.root = root
        self.delta_bytes = delta_bytes
        self.delta_messages = delta_messages
        self._state: dict[str, tuple[int, int, int]] = {}
        self._lock = threading.Lock()

    def seed(self) -> None:
        """Current sizes count as handed over (the start-up reconcile indexes them as they are)."""
        try:
            with os.scandir(self.root) as it:
                for de in it:
                    if is_transcript_name(de.name) and de.is_file(follow_symlinks=False):
                        self._state[de.name] = (de.stat(follow_symlinks=False).st_size, 0, 0)
        except OSError:
            pass

    def due(self, name: str) -> bool:
        """Whether this transcript should be re-indexed now."""
        path = self.root / name
        try:
            st = os.lstat(path)
        except OSError:
            return True  # gone: the indexer removes it
        with self._lock:
            last, pending_bytes, pending_lines = self._state.get(name, (0, 0, 0))
            if st.st_size < last:  # truncated or replaced: the index holds text now gone
                self._state[name] = (st.st_size, 0, 0)
                return True
            if st.st_size == last:
                return False
            pending_bytes += st.st_size - last
            if self.delta_bytes > 0 and pending_bytes < self.delta_bytes:
                pending_lines += self._new_lines(path, last, st.st_size)
            any_growth = self.delta_bytes <= 0 or self.delta_messages <= 0
            if any_growth or pending_bytes >= self.delta_bytes \
                    or pending_lines >= self.delta_messages:
                self._state[name] = (st.st_size, 0, 0)
                return True
            self._state[name] = (st.st_size, pending_bytes, pending_lines)
            return False

    def forget(self, name: str) -> None:
        with self._lock:
            self._state.pop(name, None)

    def _new_lines(self, path: Path, start: int, end: int) -> int:
        try:  # never through a link: a transcript is a plain file directly in the root
            fd = open_beneath(self.root, path.name)
        except OSError:
            return 0
        with os.fdopen(fd, "rb") as fh:
            fh.seek(start)
            count, left = 0, end - start
            while left > 0:
                block = fh.read(min(READ_CHUNK, left))
                if not block:
                    break
                count += block.count(b"\n")
                left -= len(block)
            return count


class _DeltaSink:
    """Watcher sink for the transcripts folder: names -> `sessions/<name>`, through the delta."""

    def __init__(self, sink: ChangeSink, delta: SessionDelta) -> None:
        self._sink = sink
        self._delta = delta

    def submit(self, changes: Sequence[Change]) -> None:
        due = []
        for change in changes:
            if change.removed:
                self._delta.forget(change.path)
                due.append(Change(PREFIX + change.path, True))
            elif self._delta.due(change.path):
                due.append(Change(PREFIX + change.path, False))
        if due:
            self._sink.submit(due)

    def request_reconcile(self, reason: str) -> None:
        self._sink.request_reconcile(reason)


def start_session_watcher(root: Path, sink: ChangeSink, settings: Any, *, name: str,
                          force_polling: bool = False) -> Watcher:
    """A started watcher on `root` (top level only: transcripts are not nested)."""
    sync = settings.sync
    delta = SessionDelta(root, sync.session_delta_bytes, sync.session_delta_messages)
    delta.seed()
    watcher = Watcher(root, lambda rel: "/" not in rel and is_transcript_name(rel),
                      _DeltaSink(sink, delta), debounce_ms=sync.watch_debounce_ms,
                      force_polling=force_polling or sync.watch_polling,
                      polling_interval=sync.watch_poll_seconds, name=f"{name}-sessions")
    watcher.start()
    log.info("sessions_watch_started", agent=name, root=str(root))
    return watcher
