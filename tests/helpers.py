"""Small helpers shared by the tests (fixtures live in conftest.py)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(pred: Callable[[], bool], timeout: float = 15.0, interval: float = 0.02) -> bool:
    """Poll `pred` until it is true or `timeout` passes; the result says which.

    Tests assert on the outcome, never on how long it took.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return pred()
