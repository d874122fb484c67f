"""openmemd: a local memory daemon for AI agents."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["MemoryIndex", "SearchResult", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy, so `import openmemd.config` does not pull in SQLite, numpy and the model.
    if name in ("MemoryIndex", "SearchResult"):
        from openmemd import api

        return getattr(api, name)
    raise AttributeError(name)
