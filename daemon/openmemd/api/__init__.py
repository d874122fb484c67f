"""The in-process library API: `MemoryIndex` (used by the CLI, the daemon and tests).

Lazy, so `openmemd.api.dreams` does not pull in SQLite, numpy and the model.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MemoryIndex", "SearchResult"]

# The search `status --deep` runs to prove an index answers (the daemon's probe and the
# in-process one); never recorded as a recall.
PROBE_QUERY = "openmemd health probe"


def __getattr__(name: str) -> Any:
    if name in __all__:
        from openmemd.api import memory_index

        return getattr(memory_index, name)
    raise AttributeError(name)
