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

A process that met the damage itself is no exception. Its next statement ensures the schema
and adopts the new generation (its own repair's or another's), and that is news too unless a
re-index already covers it: a search that met the damage asked for one (`reported`), a heal
empties and refills the namespace (`refilled`). Otherwise -- upkeep or a write met it, and its
healing failed with the table still gone -- the next search reports it, whatever CHECK_EVERY_S
says; without this the namespace stayed empty for ever.
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
        self._adopted = False
        self._reported = False  # a search met the damage: its re-index covers the next change
        self._emptied = False  # a change adopted that nothing covers: the next search says so
        self._checked = 0.0

    def adopt(self, conn: psycopg.Connection[TupleRow]) -> None:
        """After ensuring the schema (and repairing it, maybe): where this process stands."""
        value = read(conn)
        with self._lock:
            if self._adopted and value != self._seen and not self._reported:
                self._emptied = True
            self._seen, self._adopted, self._checked = value, True, time.monotonic()
            self._reported = False

    def reported(self) -> None:
        """A search met the damage (and asked for a re-index, which starts after it)."""
        with self._lock:
            self._reported = True

    def refilled(self) -> None:
        """The namespace was emptied and is being refilled from the Markdown (a heal)."""
        with self._lock:
            self._emptied = False

    def check(self, conn: psycopg.Connection[TupleRow]) -> None:
        """Raise IndexDamagedError, once, if a repair emptied the content since."""
        with self._lock:
            emptied, self._emptied = self._emptied, False
            now = time.monotonic()
            if not emptied and now - self._checked < CHECK_EVERY_S:
                return
            self._checked = now
        if not emptied:
            value = read(conn)
            with self._lock:
                if value == self._seen:
                    return
                self._seen = value
        raise IndexDamagedError(
            f"the namespace {self._ns!r} was emptied by a repair of the PostgreSQL schema "
            "(its files or chunks table had been lost); it is being indexed again from the "
            "Markdown")
