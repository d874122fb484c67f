"""The storage seam: `open_store` picks the backend; `store.base` is the interface.

Only this module chooses a backend: everything above it holds an `IndexStore`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from openmemd import paths
from openmemd.store.base import IndexStore

if TYPE_CHECKING:  # importing the storage interface need not load the settings
    from openmemd.config import Settings


def open_store(settings: Settings, agent_id: str, *, long_lived: bool = False) -> IndexStore:
    """One agent's index. `long_lived`: the daemon (checks the whole index when it opens the
    writer, keeps search structures in memory); a one-shot command leaves it off.

    The backend is chosen here and only here. PostgreSQL is imported only when configured,
    so SQLite users need none of its packages.
    """
    if settings.store.backend == "postgres":
        from openmemd.store.postgres import open_postgres_store

        return open_postgres_store(settings, agent_id, long_lived=long_lived)
    from openmemd.store.sqlite.store import SqliteStore

    path = settings.index_path(agent_id)
    paths.private_state(path.parent, settings.state_path())  # 0700, its files 0600
    return SqliteStore(path, long_lived=long_lived)


def warm_in_background(locations: Iterable[Path | str]) -> None:
    """A long-lived process, once serving: load what its stores keep in memory (SQLite: the
    resident vector matrix of each index file) in background threads, so the first search
    does not pay for it. Nothing happens unless a long-lived store was opened."""
    from openmemd.store.sqlite import resident

    resident.warm_in_background(locations)
