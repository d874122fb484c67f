"""What only a long-lived process (the daemon) turns on: stores opened long-lived (the whole
index checked when the writer opens, search structures such as the vector matrix kept in
memory), warmed once the daemon serves.

A one-shot command opens its store plainly: loading everything in memory costs more than the
one query it serves. The daemon calls `enable_resident_vectors()` before it opens any index;
every `MemoryIndex` created after that opens its store long-lived. It also calls
`shorten_gil_switch()`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from openmemd import store

_long_lived = False
# How long a thread may hold the GIL while another waits for it (Python's default: 5 ms). A
# search on a server-backed store runs its two legs on two threads; with the default, the leg
# whose answer has arrived waits up to 5 ms at a time for the other, busy scoring in Python.
# Measured at 1M chunks on PostgreSQL (bench/store.py's queries): hybrid p50/p95 20.4/33.9 ms
# with 5 ms, 16.7/27.6 ms with 1 ms.
GIL_SWITCH_S = 0.001


def enable_resident_vectors() -> None:
    global _long_lived
    _long_lived = True


def shorten_gil_switch() -> None:
    """The daemon's threads hand the GIL over within GIL_SWITCH_S (see there)."""
    sys.setswitchinterval(GIL_SWITCH_S)


def active() -> bool:
    """Whether this process is long-lived (see `enable_resident_vectors`)."""
    return _long_lived


def warm_in_background(db_paths: Iterable[Path]) -> None:
    """Load what each index keeps in memory in background threads (searches work meanwhile)."""
    store.warm_in_background(db_paths)
