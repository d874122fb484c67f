"""The daemon's view of one agent's index: exactly what `server/` uses of `MemoryIndex`.

A Protocol, so the server depends on a shape rather than on the api's classes, the real
`MemoryIndex` and the test fakes are checked against the same list (mypy), and nothing in the
server has to ask an index whether it has a method (`hasattr`) or accepts a keyword.
The records it hands back (reports, hits, the scan scope) are Protocols too: the server only
turns them into JSON and merges two reports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from openmemd.config import Settings
from openmemd.progress import Progress
from openmemd.protocol.replies import SearchReply
from openmemd.protocol.status import IndexStatus

if TYPE_CHECKING:
    from typing_extensions import Self



class ServedReport(Protocol):
    """What a sync or a vector fill reports."""

    @property
    def rows_written(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...
    def merge(self, other: Self) -> None: ...


class ServedSearch(Protocol):
    """One search's hits and what its reply says of them."""

    def reply(self, took_ms: float) -> SearchReply: ...


class ServedScope(Protocol):
    """Where the index looks: the daemon watches the transcripts folder when it lies outside
    the workspace."""

    @property
    def sessions_dir(self) -> Path | None: ...
    @property
    def agent_roots(self) -> tuple[tuple[str, Path], ...]: ...


class ServedIndex(Protocol):
    # Query settings are swapped on reload (`AgentRuntime.reload`), so this one is writable.
    settings: Settings
    # A reader that meets a damaged index calls this; the daemon asks its writer to rebuild.
    on_damage: Callable[[str], None] | None

    @property
    def workspace(self) -> Path: ...
    @property
    def scope(self) -> ServedScope: ...
    @property
    def db_path(self) -> Path: ...
    @property
    def vectors_failed(self) -> bool:
        """The last vector fill stopped on a provider error (the writer retries later)."""
        ...

    # -- reading (request threads) ---------------------------------------------------------
    def search(self, query: str, max_results: int | None = None,
               min_score: float | None = None, sources: Sequence[str] | None = None,
               explain: bool = False, *, record: bool = True,
               today: date | None = None) -> Sequence[object]: ...
    def searched(self, query: str, max_results: int | None = None,
                 min_score: float | None = None, sources: Sequence[str] | None = None,
                 explain: bool = False, *, record: bool = True,
                 today: date | None = None, project: str | None = None) -> ServedSearch: ...
    def get(self, path: str, from_line: int | None = None, lines: int | None = None, *,
            namespace: str | None = None) -> Mapping[str, Any]: ...
    def status(self) -> IndexStatus: ...
    def is_indexed_path(self, rel_path: str) -> bool: ...
    def file_replaced(self) -> bool: ...
    # The daemon appends with sync=False and leaves the indexing to its writer thread.
    def add(self, text: str, target: str = "daily", *, sync: bool = True) -> dict[str, Any]: ...
    # Once the daemon serves: what the store keeps in memory loads in the background.
    def warm_store(self) -> None: ...

    # -- writing (the indexer thread only, see server/indexer.py) --------------------------
    def sync(self, force: bool = False, progress: Progress | None = None, *,
             fill_vectors: bool = True) -> ServedReport: ...
    def sync_paths(self, rel_paths: Iterable[str], *,
                   fill_vectors: bool = True) -> ServedReport: ...
    # `between` commits edits while a batch embeds and returns their paths (embedded first).
    def fill_vectors(self, should_stop: Callable[[], bool] | None = None,
                     progress: Progress | None = None, *,
                     between: Callable[[], Sequence[str]] | None = None,
                     first: Sequence[str] = ()) -> ServedReport: ...
    def warm(self) -> None: ...
    def prune_cache(self) -> int: ...
    def checkpoint(self) -> None: ...
    def dream(self, phase: str = "all", dry_run: bool = False) -> dict[str, Any]: ...
    def close(self) -> None: ...
