"""The storage seam: `open_store` picks the backend; `store.base` is the interface.

Only this module chooses a backend: everything above it holds an `IndexStore`. `open_store`
opens the index the settings configure; `open_location` one named by where it is (a SQLite
index file, or a PostgreSQL URL and namespace), for `openmemd store copy`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from openmemd import paths
from openmemd.errors import BadRequestError
from openmemd.store.base import IndexStore
from openmemd.store.checks import BackendCheck

if TYPE_CHECKING:  # importing the storage interface need not load the settings
    from openmemd.config import Settings


def open_store(settings: Settings, agent_id: str, *, long_lived: bool = False,
               workspace: Path | None = None) -> IndexStore:
    """One agent's index. `long_lived`: the daemon (checks the whole index when it opens the
    writer, keeps search structures in memory); a one-shot command leaves it off. `workspace`:
    the workspace that fills it: a PostgreSQL namespace records it, and refuses a writer for
    another one. Without it (tests, benchmarks), the writer neither records nor checks one.

    The backend is chosen here and only here. PostgreSQL is imported only when configured,
    so SQLite users need none of its packages.
    """
    if settings.store.backend == "postgres":
        from openmemd.store.postgres import open_postgres_store

        return open_postgres_store(settings, agent_id, long_lived=long_lived,
                                   workspace=workspace)
    from openmemd.store.sqlite.index_file import from_os_error, location_problem
    from openmemd.store.sqlite.store import SqliteStore

    path = settings.index_path(agent_id)
    found = location_problem(path)  # a state dir that is a file, a FIFO: said, never opened
    if found is not None:
        raise found.error()
    try:
        paths.private_state(path.parent, settings.state_path())  # 0700, its files 0600
    except OSError as exc:
        raise from_os_error(exc, path, write=True).error() from None
    return SqliteStore(path, long_lived=long_lived)


def check_backend(settings: Settings) -> BackendCheck:
    """`openmemd doctor`: the configured backend's own check (SQLite: sqlite-vec loads into
    its driver; PostgreSQL: the server answers, UTF-8, pgvector). Writes nothing."""
    if settings.store.backend == "postgres":
        try:
            from openmemd.store.postgres.probe import check_server
        except ImportError as exc:
            return BackendCheck("postgresql", problem="store.backend = \"postgres\" needs the "
                                f"postgres extra ({exc.name} is missing)", fatal=True,
                                fix="pip install 'psycopg[binary]' psycopg-pool pgvector")
        return check_server(settings.store)
    from openmemd.store.sqlite.db import check_driver

    return check_driver()


def check_index(settings: Settings, agent_id: str) -> BackendCheck | None:
    """`openmemd doctor`: what is wrong with `agent_id`'s index file and the fix, read-only
    (nothing renamed, nothing created). None for PostgreSQL: its server check covers it."""
    if settings.store.backend == "postgres":
        return None
    from openmemd.store.sqlite.examine import examine

    return examine(settings.index_path(agent_id))


URL_SCHEMES = ("postgresql://", "postgres://")
_FIRST_KEY = re.compile(r"\s*(\w+)\s*=")
# libpq's common keywords, for when psycopg (the `postgres` extra) is not there to list them all
_COMMON_KEYWORDS = frozenset((
    "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service", "sslmode",
    "options", "application_name", "connect_timeout"))


def is_database(location: str) -> bool:
    """Whether `location` names a PostgreSQL database rather than a SQLite file: a URL, or
    key/value pairs ('host=db dbname=memory', as `store.url` takes them) that start with one of
    libpq's keywords (a mistake further on is then libpq's clear error, not a new file).
    Without the key/value form, a connection string copied from `store.url` became the name of
    a new SQLite file."""
    if location.lower().startswith(URL_SCHEMES):
        return True
    first = _FIRST_KEY.match(location)
    return first is not None and first[1].lower() in _libpq_keywords()


@functools.cache
def _libpq_keywords() -> frozenset[str]:
    try:
        from openmemd.store.postgres.connect import libpq_keywords
    except ImportError:
        return _COMMON_KEYWORDS
    return libpq_keywords()


def open_location(location: str, settings: Settings, agent_id: str, *,
                  namespace: str | None = None, create: bool = False,
                  workspace: Path | None = None) -> IndexStore:
    """The index at `location`: a PostgreSQL connection string (`is_database`: PostgreSQL
    backend, in `namespace`, default the configured `store.namespace` of `agent_id`) or a path
    (a SQLite index file). `create`: make the file's folder if missing (a copy's target).
    `workspace`: the workspace whose index a namespace holds (see `open_store`)."""
    if is_database(location):
        store = dataclasses.replace(settings.store, backend="postgres", url=location,
                                    namespace=namespace or settings.store.namespace)
        return open_store(dataclasses.replace(settings, store=store), agent_id,
                          workspace=workspace)
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


def warm_in_background(locations: Iterable[Path | str]) -> None:
    """A long-lived process, once serving: load what its stores keep in memory (SQLite: the
    resident vector matrix of each index file) in background threads, so the first search
    does not pay for it. Nothing happens unless a long-lived store was opened."""
    from openmemd.store.sqlite import resident

    resident.warm_in_background(locations)
