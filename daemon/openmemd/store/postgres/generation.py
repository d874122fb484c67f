"""Content emptied by another process's schema repair, noticed.

A repair that finds `files` or `chunks` gone empties the content of every namespace
(schema._repair), so that each daemon's next sync indexes its Markdown again. The daemon that
repairs knows (the statement that met the damage failed, and it asks for a reconcile); the
others sharing the database got no error, and went on with an empty namespace until their
periodic reconcile (never, with `sync.reconcile_minutes = 0`). So the repair also writes a new
`meta` row `content_generation`, and each process's reader compares it, at most every
CHECK_EVERY_S seconds, with the one it saw when it ensured the schema: a change is reported
once, as index damage, which the daemon answers as any other (its writer re-indexes the
Markdown). The check runs on a request's pooled connection, under the query timeout, never on
the daemon's main loop (where a server gone silent could hold it past a watchdog).
"""

from __future__ import annotations

import threading
import time

import psycopg
from psycopg.rows import TupleRow

from openmemd.store.base import IndexDamagedError
from openmemd.store.postgres.schema import CONTENT_GENERATION, SCHEMA

CHECK_EVERY_S = 5.0


def read(conn: psycopg.Connection[TupleRow]) -> str | None:
    row = conn.execute(f"SELECT value FROM {SCHEMA}.meta WHERE key = %s",
                       (CONTENT_GENERATION,)).fetchone()
    return None if row is None else str(row[0])


class ContentGeneration:
    """The `content_generation` this process has seen, shared by its store and reader."""

    def __init__(self, ns: str) -> None:
        self._ns = ns
        self._lock = threading.Lock()
        self._seen: str | None = None
        self._checked = 0.0

    def adopt(self, conn: psycopg.Connection[TupleRow]) -> None:
        """After ensuring the schema (and repairing it, maybe): where this process stands."""
        value = read(conn)
        with self._lock:
            self._seen, self._checked = value, time.monotonic()

    def check(self, conn: psycopg.Connection[TupleRow]) -> None:
        """Raise IndexDamagedError, once, if a repair emptied the content since."""
        with self._lock:
            now = time.monotonic()
            if now - self._checked < CHECK_EVERY_S:
                return
            self._checked = now
        value = read(conn)
        with self._lock:
            if value == self._seen:
                return
            self._seen = value
        raise IndexDamagedError(
            f"the namespace {self._ns!r} was emptied by a repair of the PostgreSQL schema "
            "(its files or chunks table had been lost); it is being indexed again from the "
            "Markdown")
