"""Request worker threads that cannot silently disappear.

A `WorkerPool` runs N threads over one queue. Every iteration is guarded: an exception in the
work function is answered with an `internal` reply and the thread goes on. A thread that still
ends (a BaseException such as SystemExit from a library) is noticed by `supervise()`, which the
server's I/O thread calls every turn: the request it held is handed back to be answered, and a
new thread takes its slot. Each slot records since when it is busy, so a request stuck past
`stuck_after_s` shows in `problems()` (status) and `stalled()` (the systemd watchdog).
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import zmq

from openmemd.log import get_logger
from openmemd.protocol.requests import INTERNAL_REPLY

log = get_logger(__name__)

Envelope = list[bytes]
# (routing envelope, payload) -> reply body, or None when the item was handed on elsewhere.
Work = Callable[[Envelope, Any, "Slot"], "bytes | None"]
DEATHS_SHOWN_S = 600.0  # a replaced worker stays in `status` problems this long
_SEND_TIMEOUT_MS = 5000
# A request waiting this long for a worker thread makes `status` degraded ("N requests
# queuing"): every thread is busy, and a client may be about to time out.
QUEUING_S = 2.0


class Slot:
    """One worker thread's place in the pool and what it is doing now."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.thread: threading.Thread | None = None
        self.envelope: Envelope | None = None  # the request being handled, until answered
        self.busy_since: float | None = None
        self.op = ""
        self.death = ""

    def begin(self, envelope: Envelope) -> None:
        self.envelope, self.busy_since, self.op = envelope, time.monotonic(), ""

    def end(self) -> None:
        self.envelope, self.busy_since, self.op = None, None, ""


class WorkerPool:
    def __init__(self, name: str, size: int, work: Work, *, context: zmq.Context[Any],
                 reply_url: str, queue_size: int = 0, stuck_after_s: float = 300.0,
                 reserve: bool = False) -> None:
        """`reserve`: `submit` only succeeds while a thread is free (no waiting line)."""
        self.name = name
        self.size = max(1, size)
        self._work = work
        self._ctx = context
        self._reply_url = reply_url
        # (envelope, payload, monotonic time queued): `waiting` reads the oldest one's age
        self.queue: queue.Queue[tuple[Envelope, Any, float] | None] = queue.Queue(queue_size)
        self.stuck_after_s = stuck_after_s
        self._free = threading.BoundedSemaphore(self.size) if reserve else None
        self.slots = [Slot(f"{name}-{i}") for i in range(self.size)]
        self._stopping = False
        self.deaths = 0
        self._last_death: tuple[float, str] | None = None
        self._start_error = ""

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        for slot in self.slots:
            self._start_thread(slot)

    def _start_thread(self, slot: Slot) -> bool:
        thread = threading.Thread(target=self._run, args=(slot,), name=f"openmemd-{slot.name}",
                                  daemon=True)
        try:
            thread.start()
        except RuntimeError as exc:  # "can't start new thread": out of threads or memory
            self._start_error = str(exc)
            log.error("request_worker_start_failed", worker=slot.name, error=str(exc))
            return False
        slot.thread = thread
        return True

    def submit(self, envelope: Envelope, payload: Any) -> bool:
        """Queue one item; False when the queue is full (or, with `reserve`, no thread is free)."""
        if self._free is not None and not self._free.acquire(blocking=False):
            return False
        try:
            self.queue.put_nowait((envelope, payload, time.monotonic()))
        except queue.Full:
            self._release()
            return False
        return True

    def signal_stop(self, deadline: float) -> None:
        self._stopping = True
        for _ in self.slots:
            try:
                self.queue.put(None, timeout=max(0.0, deadline - time.monotonic()))
            except queue.Full:
                return

    def join(self, deadline: float) -> None:
        for slot in self.slots:
            if slot.thread is not None:
                slot.thread.join(max(0.1, deadline - time.monotonic()))

    def alive(self) -> bool:
        return any(s.thread is not None and s.thread.is_alive() for s in self.slots)

    # -- the threads ----------------------------------------------------------------------
    def _run(self, slot: Slot) -> None:
        push = self._ctx.socket(zmq.PUSH)
        push.setsockopt(zmq.LINGER, 0)
        push.setsockopt(zmq.SNDTIMEO, _SEND_TIMEOUT_MS)
        push.connect(self._reply_url)
        try:
            while True:
                item = self.queue.get()
                if item is None:
                    return
                envelope, payload, _queued = item
                slot.begin(envelope)
                try:
                    reply = self._work(envelope, payload, slot)
                except Exception:  # work() answers its own errors; this is the last guard
                    log.exception("request_worker_error", worker=slot.name)
                    reply = INTERNAL_REPLY
                if reply is not None:
                    try:
                        push.send_multipart([*envelope, reply])
                    except zmq.ZMQError as exc:  # stopping: the I/O thread is gone
                        log.warning("reply_not_delivered", worker=slot.name, error=str(exc))
                slot.end()
                self._release()
        except BaseException as exc:
            slot.death = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            push.close(0)

    def _release(self) -> None:
        if self._free is not None:
            try:
                self._free.release()
            except ValueError:  # pragma: no cover - released more often than taken
                pass

    # -- supervision ----------------------------------------------------------------------
    def supervise(self) -> list[Envelope]:
        """Replace dead threads; return the envelopes of requests they died holding."""
        orphans: list[Envelope] = []
        if self._stopping:
            return orphans
        for slot in self.slots:
            if slot.thread is None or slot.thread.is_alive():
                if slot.thread is None:
                    self._start_thread(slot)  # an earlier start failed: try again
                continue
            self.deaths += 1
            reason = slot.death or "ended"
            self._last_death = (time.monotonic(), reason)
            log.error("request_worker_died", worker=slot.name, reason=reason,
                      op=slot.op or None)
            if slot.envelope is not None:
                orphans.append(slot.envelope)
                self._release()
            slot.end()
            slot.death = ""
            slot.thread = None
            self._start_thread(slot)
        return orphans

    def stalled(self, now: float | None = None) -> list[str]:
        """Problems that mean this pool no longer serves: a dead slot, a stuck request."""
        now = time.monotonic() if now is None else now
        found: list[str] = []
        for slot in self.slots:
            if slot.thread is None or not slot.thread.is_alive():
                if not self._stopping:
                    found.append(f"request worker {slot.name} is not running"
                                 + (f" ({self._start_error})" if self._start_error else ""))
                continue
            since = slot.busy_since
            if since is not None and now - since > self.stuck_after_s:
                found.append(f"request worker {slot.name} stuck on {slot.op or 'a request'} "
                             f"for {now - since:.0f}s (limit {self.stuck_after_s:.0f}s)")
        return found

    def waiting(self, now: float | None = None) -> tuple[int, float]:
        """How many items wait for a thread, and how long the oldest has waited (seconds)."""
        now = time.monotonic() if now is None else now
        with self.queue.mutex:  # a peek at the deque: the oldest item is at its head
            items = [i for i in self.queue.queue if i is not None]
        return len(items), (now - items[0][2]) if items else 0.0

    def queuing(self, now: float | None = None) -> list[str]:
        """The line `status` shows while requests wait longer than QUEUING_S for a thread:
        every thread is busy, and what with."""
        count, oldest = self.waiting(now)
        if not count or oldest < QUEUING_S:
            return []
        ops = Counter(s.op or "a request" for s in self.slots if s.busy_since is not None)
        doing = ", ".join(f"{op} ×{n}" if n > 1 else op for op, n in ops.most_common())
        return [f"{count} request(s) queuing for {oldest:.0f}s: all {self.size} {self.name} "
                f"workers are busy ({doing or 'finishing'})"]

    def problems(self, now: float | None = None) -> list[str]:
        now = time.monotonic() if now is None else now
        found = self.stalled(now) + self.queuing(now)
        if self._last_death is not None and now - self._last_death[0] < DEATHS_SHOWN_S:
            at, reason = self._last_death
            found.append(f"{self.deaths} {self.name} worker thread(s) died since start (last "
                         f"{now - at:.0f}s ago: {reason}); replaced, see the log")
        return found

    def stats(self, now: float | None = None) -> dict[str, Any]:
        now = time.monotonic() if now is None else now
        busy = [s for s in self.slots if s.busy_since is not None]
        queued, oldest = self.waiting(now)
        return {"threads": self.size, "busy": len(busy), "queued": queued,
                "oldestQueuedSeconds": round(oldest, 1), "deaths": self.deaths,
                "longestBusySeconds": round(max((now - (s.busy_since or now)) for s in busy), 1)
                if busy else 0.0}
