"""Small helpers shared by the server modules."""

from __future__ import annotations

import time


def iso(ts: float | None) -> str | None:
    """A Unix time as local ISO 8601 with offset (what status shows), None stays None."""
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(ts))
