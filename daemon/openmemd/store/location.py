"""An index named by where it is: a SQLite index file, or a PostgreSQL URL and namespace.

`open_store(settings, agent_id)` opens the index the settings configure; `openmemd store copy`
names two indexes on its command line instead. Only the store package chooses a backend, so
the mapping from a location string to a backend lives here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from openmemd.errors import BadRequestError
from openmemd.store.base import IndexStore

if TYPE_CHECKING:
    from openmemd.config import Settings

URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(location: str) -> bool:
    return location.lower().startswith(URL_SCHEMES)


def open_location(location: str, settings: Settings, agent_id: str, *,
                  namespace: str | None = None, create: bool = False) -> IndexStore:
    """The index at `location`: a `postgresql://` URL (PostgreSQL backend, in `namespace`,
    default the configured `store.namespace` of `agent_id`) or a path (a SQLite index file).
    `create`: make the file's folder if missing (a copy's target)."""
    from openmemd.store import open_store

    if is_url(location):
        store = dataclasses.replace(settings.store, backend="postgres", url=location,
                                    namespace=namespace or settings.store.namespace)
        return open_store(dataclasses.replace(settings, store=store), agent_id)
    if "://" in location:
        raise BadRequestError(f"not a PostgreSQL URL nor a path: {location.split('://')[0]}://"
                              "... (use postgresql://...)")
    if namespace:
        raise BadRequestError("a namespace applies to a PostgreSQL URL, not to a SQLite file")
    path = Path(location).expanduser().absolute()
    if path.is_dir():
        raise BadRequestError(f"{path} is a folder: name the index file (e.g. main.sqlite)")
    if create:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # an index is private
    from openmemd.store.sqlite.store import SqliteStore

    return SqliteStore(path)
