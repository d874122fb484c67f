"""The in-process library API: `MemoryIndex` (used by the CLI, the daemon and tests)."""

from openmemd.api.memory_index import MemoryIndex, SearchResult

__all__ = ["MemoryIndex", "SearchResult"]
