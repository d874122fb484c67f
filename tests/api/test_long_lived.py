"""What a long-lived process turns on (api/long_lived.py)."""

from __future__ import annotations

import sys

from openmemd.api import long_lived


def test_the_gil_is_handed_over_within_a_millisecond():
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)  # Python's default
        long_lived.shorten_gil_switch()
        assert sys.getswitchinterval() == long_lived.GIL_SWITCH_S <= 0.001
    finally:
        sys.setswitchinterval(before)
