"""The writer's own connection, holding the namespace's advisory lock while the writer lives.

One writer per namespace: a session-level `pg_try_advisory_lock` on a key derived from the
namespace. The lock lives as long as this connection; if the server goes away the lock goes
with it, so the next write reconnects and takes it again -- or finds that another daemon took
it meanwhile and stops with the same "locked" error as at start. Each time it takes the
lock it also checks that the namespace is this workspace's (owner.py), so a namespace adopted
by another workspace while this writer was disconnected is not written again.
"""

from __future__ import annotations

import os
import socket
import threading

import psycopg
from psycopg.rows import TupleRow

from openmemd.errors import IndexLockedError
from openmemd.store.postgres import owner as owners
from openmemd.store.postgres.connect import PgConnectSpec, configure_session, connect, translated

_LOCK_SQL = "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))"
# The session holding a bigint advisory lock: pg_locks shows the key as two 32-bit halves.
_HOLDER_SQL = """
WITH k AS (SELECT hashtextextended(%s, 0) AS k)
SELECT a.application_name, host(a.client_addr), to_char(a.backend_start AT TIME ZONE 'UTC',
       'YYYY-MM-DD HH24:MI "UTC"')
FROM k, pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
  AND l.classid = ((k.k >> 32) & 4294967295)::oid AND l.objid = (k.k & 4294967295)::oid
"""


def lock_key(ns: str) -> str:
    return f"openmemd-writer:{ns}"


class WriterSession:
    def __init__(self, target: PgConnectSpec, ns: str, owner: str | None) -> None:
        """`owner`: the workspace this writer fills (owner.py), checked at every lock; None:
        not checked (`PgStore.adopt` records it itself under the lock; a store opened
        without a workspace)."""
        self.target = target
        self.ns = ns
        self.owner = owner
        self._conn: psycopg.Connection[TupleRow] | None = None
        self._mutex = threading.Lock()

    def connection(self) -> psycopg.Connection[TupleRow]:
        """The live, locked connection: (re)connects and (re)locks when needed."""
        with self._mutex:
            conn = self._conn
            if conn is not None and not (conn.closed or conn.broken):
                return conn
            self._conn = None
            if conn is not None:
                conn.close()
            conn = connect(self.target)
            try:
                with translated(self.target, "locking the namespace in"):
                    # Who holds a lock shows in pg_stat_activity.application_name.
                    conn.execute("SELECT set_config('application_name', %s, false)",
                                 (f"openmemd writer {socket.gethostname()}:{os.getpid()}",))
                    row = conn.execute(_LOCK_SQL, (lock_key(self.ns),)).fetchone()
                    if not (row and row[0]):
                        raise IndexLockedError(
                            f"the namespace {self.ns!r} at {self.target.shown} is being "
                            f"written by another openmemd process ({_holder(conn, self.ns)}); "
                            "use that daemon (it answers these commands), stop it first, or "
                            "give this one its own store.namespace")
                    if self.owner is not None:
                        owners.claim(conn, self.ns, self.owner, shown=self.target.shown)
                    configure_session(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
            return conn

    def close(self) -> None:
        with self._mutex:
            conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            try:
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))",
                             (lock_key(self.ns),))
            except psycopg.Error:
                pass  # closing the session releases it anyway
            conn.close()


def _holder(conn: psycopg.Connection[TupleRow], ns: str) -> str:
    """Who holds the namespace's lock, as far as this role may see (its application_name
    names the host and pid; the client address and start need the same role or
    pg_read_all_stats)."""
    try:
        row = conn.execute(_HOLDER_SQL, (lock_key(ns),)).fetchone()
    except psycopg.Error:
        row = None
    if row is None:
        return "on this host or another"
    name, addr, since = row
    parts = [str(name) if name else "a session without a name"]
    if addr:
        parts.append(f"from {addr}")
    if since:
        parts.append(f"connected since {since}")
    return ", ".join(parts)
