"""The PostgreSQL + pgvector backend (`[store] backend = "postgres"`): many daemons share one
database, each writing its own namespace. Needs the `postgres` extra (psycopg 3, its pool and
the pgvector adapter); imported only when configured, so SQLite users need none of it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from openmemd.errors import UnavailableError

if TYPE_CHECKING:
    from openmemd.config import Settings
    from openmemd.store.base import IndexStore


def open_postgres_store(settings: Settings, agent_id: str, *, long_lived: bool = False,
                        workspace: Path | None = None) -> IndexStore:
    """A `PgStore` for this agent's namespace, filled from `workspace` (see `open_store`).
    Does not connect (see store.py)."""
    try:
        from openmemd.store.postgres.connect import PgConnectSpec
        from openmemd.store.postgres.owner import workspace_owner
        from openmemd.store.postgres.store import PgStore
    except ImportError as exc:
        raise UnavailableError(
            f"store.backend = \"postgres\" needs the postgres extra ({exc.name} is missing): "
            "pip install 'psycopg[binary]' psycopg-pool pgvector") from None
    store = settings.store
    target = PgConnectSpec(store.url, store.statement_timeout_ms)
    # Each request thread searches with two connections at once (the keyword leg runs beside
    # the vector leg, search/pipeline.py), plus one for status and maintenance.
    pool_size = 2 * settings.server.workers + 1 if long_lived else 2
    return PgStore(target, store.namespace_for(agent_id), store.search_namespaces_for(agent_id),
                   pool_size=pool_size,
                   workspace=None if workspace is None else workspace_owner(workspace))
