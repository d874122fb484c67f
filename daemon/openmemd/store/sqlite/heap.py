"""Giving freed heap memory back to the operating system after a large one-off load.

Loading the resident matrix (resident.py) builds short-lived Python objects for every row
(ids, rowids, the rows read from SQLite): tens of MB at 100k chunks, freed once the matrix is
built. glibc keeps such memory in its arenas (the load runs in a background thread, with an
arena of its own) rather than returning it, so the daemon's RSS stayed that much higher for
good. `malloc_trim(0)` returns the free pages of every arena. Elsewhere (macOS, musl) this is
a no-op: their allocators return memory on their own terms.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable

_trim: Callable[[int], int] | None = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _trim = _libc.malloc_trim  # absent from musl
    except (OSError, AttributeError):
        _trim = None


def release_free_memory() -> bool:
    """Return freed heap pages to the OS where the C library can; True if it did anything."""
    if _trim is None:
        return False
    return bool(_trim(0))
