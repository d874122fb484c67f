"""Per-key debouncing on one timer thread.

Each `touch(key, value)` (re)starts that key's quiet period; when a key has been quiet for
`delay` seconds its latest value is handed to `flush`, batched with every other key that expired
at the same time. One thread and a heap serve any number of keys (memsearch starts one
threading.Timer per path, which costs a thread per file during a `git checkout`).
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable
from typing import Any

from openmemd.log import get_logger

log = get_logger(__name__)

FlushFn = Callable[[list[tuple[str, Any]]], None]


class Debouncer:
    def __init__(self, delay: float, flush: FlushFn, *, max_pending: int = 10_000,
                 on_overflow: Callable[[], None] | None = None, name: str = "debounce") -> None:
        self._delay = max(0.0, delay)
        self._flush = flush
        self._max_pending = max_pending
        self._on_overflow = on_overflow
        self._name = name
        self._cond = threading.Condition()
        # key -> (deadline, value); the heap holds (deadline, key) and may contain stale
        # entries, which are skipped when their deadline no longer matches the dict.
        self._pending: dict[str, tuple[float, Any]] = {}
        self._heap: list[tuple[float, str]] = []
        self._stopping = False
        self._thread: threading.Thread | None = None

    # -- producer side --------------------------------------------------------------------
    def touch(self, key: str, value: Any) -> None:
        overflow = False
        with self._cond:
            if self._stopping:
                return
            if key not in self._pending and len(self._pending) >= self._max_pending:
                # Too many distinct paths at once (a checkout, a restore): drop them all and let
                # the caller fall back to a full reconcile, which sees every change anyway.
                self._pending.clear()
                self._heap.clear()
                overflow = True
            else:
                deadline = time.monotonic() + self._delay
                was_empty = not self._heap
                self._pending[key] = (deadline, value)
                heapq.heappush(self._heap, (deadline, key))
                # Deadlines only grow with a fixed delay, so the timer thread needs waking only
                # when it was idle (or the delay was shortened, see set_delay).
                if was_empty or self._delay == 0:
                    self._cond.notify()
        if overflow:
            log.warning("debounce_overflow", watcher=self._name, max_pending=self._max_pending)
            if self._on_overflow is not None:
                self._on_overflow()

    def set_delay(self, delay: float) -> None:
        with self._cond:
            self._delay = max(0.0, delay)
            self._cond.notify()

    @property
    def delay(self) -> float:
        return self._delay

    def pending(self) -> int:
        with self._cond:
            return len(self._pending)

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name=f"openmemd-{self._name}",
                                        daemon=True)
        self._thread.start()

    def stop(self, *, flush: bool = False, timeout: float = 5.0) -> None:
        """Stop the timer thread; with `flush`, hand over what is pending first."""
        with self._cond:
            self._stopping = True
            items = [(k, v) for k, (_, v) in self._pending.items()] if flush else []
            self._pending.clear()
            self._heap.clear()
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout)
        if items:
            self._safe_flush(items)

    # -- timer thread ---------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                due = self._collect_due_locked()
                while not due and not self._stopping:
                    timeout = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cond.wait(timeout)
                    due = self._collect_due_locked()
                if self._stopping:
                    return
            self._safe_flush(due)

    def _collect_due_locked(self) -> list[tuple[str, Any]]:
        now = time.monotonic()
        due: list[tuple[str, Any]] = []
        while self._heap and self._heap[0][0] <= now:
            deadline, key = heapq.heappop(self._heap)
            entry = self._pending.get(key)
            if entry is not None and entry[0] == deadline:
                del self._pending[key]
                due.append((key, entry[1]))
        return due

    def _safe_flush(self, items: list[tuple[str, Any]]) -> None:
        try:
            self._flush(items)
        except Exception:  # the timer thread must survive a faulty sink
            log.exception("debounce_flush_failed", watcher=self._name, count=len(items))
