"""What only a long-lived process (the daemon) turns on: stores opened long-lived (the whole
index checked when the writer opens, search structures such as the vector matrix kept in
memory), warmed once the daemon serves.

A one-shot command opens its store plainly: loading everything in memory costs more than the
one query it serves. The daemon calls `enable_resident_vectors()` before it opens any index;
every `MemoryIndex` created after that opens its store long-lived.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from openmemd import store

_long_lived = False


def enable_resident_vectors() -> None:
    global _long_lived
    _long_lived = True


def active() -> bool:
    """Whether this process is long-lived (see `enable_resident_vectors`)."""
    return _long_lived


def warm_in_background(db_paths: Iterable[Path]) -> None:
    """Load what each index keeps in memory in background threads (searches work meanwhile)."""
    store.warm_in_background(db_paths)
