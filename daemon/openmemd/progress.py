"""Progress of long work (reading files, embedding chunks): how far, how fast, how long left.

The indexer reports `(phase, done, total)` after every file and every embedding batch.
`ProgressMeter` turns those calls into snapshots with a rate and an ETA; the CLI draws them
as a one-line bar (`ProgressBar`), the daemon logs them and shows the latest in `status`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import IO, Any, NamedTuple

# Reports progress: (phase, done, total), phase "files" or "vectors"; raising from it abandons
# the work.
Progress = Callable[[str, int, int], None]

# Who hears the progress of the request this thread serves, besides the caller's own sink:
# an MCP tool call whose client asked for progress notifications (mcp/tools.py) sets it.
reporter: ContextVar[Progress | None] = ContextVar("openmemd_progress", default=None)

UNITS = {"files": "files", "vectors": "chunks"}
LABELS = {"files": "Indexing files", "vectors": "Embedding chunks"}


class ProgressSnapshot(NamedTuple):  # not a dataclass: `openmemd status` imports this
    """Long work at one moment: done of total, its rate and what remains."""

    phase: str
    done: int
    total: int
    # per second, over this run of the phase; before its first batch is done, the rate of the
    # phase's previous run (a fill resumed after a reconcile), else None: never a made-up 0.0
    rate: float | None
    eta_s: float | None  # None until there is a rate
    elapsed_s: float

    def to_dict(self) -> dict[str, Any]:
        return {"phase": self.phase, "done": self.done, "total": self.total,
                "rate": None if self.rate is None else round(self.rate, 2),
                "etaSeconds": None if self.eta_s is None else round(self.eta_s),
                "elapsedSeconds": round(self.elapsed_s, 1)}


class ProgressMeter:
    """Rate and ETA of the current phase; a new phase (or a count that went back: a new run)
    restarts the clock, so the files phase never skews the rate of the vectors phase. Until
    the new run has done something, its rate is the one its phase last had (None at first):
    a count of 0 at the start of a run says nothing of its speed."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._phase = ""
        self._started = 0.0
        self._base = 0
        self._last_done = 0
        self._rates: dict[str, float] = {}  # each phase's last measured rate

    def update(self, phase: str, done: int, total: int) -> ProgressSnapshot:
        now = self._clock()
        if phase != self._phase or done < self._last_done:
            self._phase, self._started, self._base = phase, now, done
        self._last_done = done
        elapsed = now - self._started
        if done > self._base and elapsed > 0:
            self._rates[phase] = (done - self._base) / elapsed
        rate = self._rates.get(phase)
        eta = max(0, total - done) / rate if rate else None
        return ProgressSnapshot(phase, done, total, rate, eta, elapsed)


def format_rate(rate: float | None, unit: str) -> str:
    return "measuring the rate" if rate is None else f"{rate:.1f} {unit}/s"


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


def describe(p: Mapping[str, Any]) -> str:
    """One line for a `status` progress dict."""
    unit = UNITS.get(p.get("phase", ""), "items")
    return (f"{p.get('phase')} {p.get('done')}/{p.get('total')} {unit} · "
            f"{format_rate(p.get('rate'), unit)} · eta {format_duration(p.get('etaSeconds'))}")


class ProgressBar:
    """A one-line progress display on a terminal; silent otherwise."""

    def __init__(self, enabled: bool, stream: IO[str] | None = None,
                 clock: Callable[[], float] = time.monotonic, width: int = 24) -> None:
        self.enabled = enabled
        self._stream = stream or sys.stderr
        self._clock = clock
        self._meter = ProgressMeter(clock)
        self._last = float("-inf")
        self._width = width

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        snap = self._meter.update(phase, done, total)
        now = self._clock()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        unit = UNITS.get(phase, "items")
        filled = int(self._width * done / total) if total else self._width
        self._stream.write(
            f"\r{LABELS.get(phase, phase)} [{'#' * filled}{'.' * (self._width - filled)}] "
            f"{done}/{total} {unit} · {format_rate(snap.rate, unit)} · "
            f"{format_duration(snap.elapsed_s)} · eta {format_duration(snap.eta_s)} ")
        if done >= total:
            self._stream.write("\n")
        self._stream.flush()


class ProgressLine:
    """Progress as a line on a stream (stderr) at most every `every` seconds and at the end:
    for long work no terminal shows (an MCP server's stderr, a command piped)."""

    def __init__(self, stream: IO[str] | None = None, every: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream or sys.stderr
        self._every = every
        self._clock = clock
        self._meter = ProgressMeter(clock)
        self._last = float("-inf")

    def __call__(self, phase: str, done: int, total: int) -> None:
        snap = self._meter.update(phase, done, total)
        now = self._clock()
        if done < total and now - self._last < self._every:
            return
        self._last = now
        self._stream.write(f"openmemd: {LABELS.get(phase, phase).lower()} "
                           f"{describe(snap.to_dict()).split(' ', 1)[1]}\n")
        self._stream.flush()
