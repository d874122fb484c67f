"""What the daemon's process turns on for its threads (server/daemon.py)."""

from __future__ import annotations

import sys

from openmemd.server import daemon


def test_the_gil_is_handed_over_within_a_millisecond():
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)  # Python's default
        daemon.shorten_gil_switch()
        assert sys.getswitchinterval() == daemon.GIL_SWITCH_S <= 0.001
    finally:
        sys.setswitchinterval(before)
