"""Connections to the server: the readers' pool, the writer's own connection, and the one
place driver errors become openmemd errors (never with the password in them).

Every connection carries `statement_timeout` (no query can hang a request thread), a short
`connect_timeout` (a server that is down answers "unavailable" quickly) and TCP keepalives on
both ends (see KEEPALIVE_*: a peer that vanishes without closing its connection is noticed in
seconds, not hours). The pool
(psycopg_pool) checks a connection before lending it, so after the server comes back the next
request reconnects by itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import psycopg
import psycopg_pool
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import TupleRow

from openmemd.config.store_url import redact_url, url_password
from openmemd.errors import ConfigError, OpenmemdError
from openmemd.store.base import (
    DiskFullError,
    IndexDamagedError,
    RowRejectedError,
    StoreUnavailableError,
)

# The pool's connections: rows come back as plain tuples (psycopg's default row factory).
Pool = psycopg_pool.ConnectionPool[psycopg.Connection[TupleRow]]

CONNECT_TIMEOUT_S = 5
# TCP keepalives, asked of libpq (this end) and of the server (its end, per session). A host
# that loses power or its network closes nothing: without probes, Linux keeps such a
# connection 2 h 11 min (tcp_keepalive_time 7200 s + 9 probes of 75 s). On the server's end
# the dead session would hold its namespace's writer lock that long, so the daemon restarted
# on that host (or moved to another) would be "locked" out of its own namespace; on this end a
# query waiting on a server that vanished would hold its request thread that long (the
# statement timeout is the server's to enforce). Idle 15 s, then 3 probes 5 s apart: a dead
# peer is dropped after ~30 s, for a 60-byte probe per idle connection every 15 s. Keepalives
# only probe an idle connection; data sent and never acknowledged (a query sent as the link
# went) is bounded by the TCP user timeout instead, 30 s, where the kernel would retransmit
# for ~15 min. A URL that sets its own parameters, or its own -c options for the server's,
# keeps them.
KEEPALIVE_IDLE_S = 15
KEEPALIVE_INTERVAL_S = 5
KEEPALIVE_COUNT = 3
TCP_USER_TIMEOUT_MS = 30_000
_SERVER_KEEPALIVES = (f"-c tcp_keepalives_idle={KEEPALIVE_IDLE_S} "
                      f"-c tcp_keepalives_interval={KEEPALIVE_INTERVAL_S} "
                      f"-c tcp_keepalives_count={KEEPALIVE_COUNT} "
                      f"-c tcp_user_timeout={TCP_USER_TIMEOUT_MS}")
# How long a reader waits for a pooled connection. Each request thread has two in the pool (one
# per search leg), so waiting only happens while connecting; once the server is known to be
# down, `Outage` answers at once instead.
POOL_WAIT_S = 3.0
# Recall with filters: pgvector's HNSW returns at most ef_search rows before filtering; an
# iterative scan keeps going until `limit` rows pass the filters (pgvector >= 0.8). 150: on the
# graph schema.py builds, the recall the vector leg needs at the least cost (docs/benchmarks.md,
# "Figures behind the code's choices").
HNSW_EF_SEARCH = 150


@dataclass(frozen=True)
class PgConnectSpec:
    """Where the server is and how long a query may run."""

    url: str  # may hold a password: never shown, see `shown` (and the repr)
    statement_timeout_ms: int

    def __repr__(self) -> str:
        return f"PgConnectSpec({self.shown!r}, statement_timeout_ms={self.statement_timeout_ms})"

    @property
    def shown(self) -> str:
        return redact_url(self.url) if self.url else "(libpq defaults: PG* variables)"

    def kwargs(self) -> dict[str, Any]:
        """Connection keywords on top of the URL's: what the URL sets wins, except that the
        statement timeout is appended to its `options` (the last -c of a setting wins)."""
        try:
            given = conninfo_to_dict(self.url) if self.url else {}
        except psycopg.ProgrammingError:
            given = {}  # connect() reports the bad URL itself
        # the last -c of a setting wins: the URL's over our keepalives, ours over its timeout
        options = (f"{_SERVER_KEEPALIVES} {given.get('options') or ''} "
                   f"-c statement_timeout={self.statement_timeout_ms}")
        out: dict[str, Any] = {"autocommit": True, "options": options.strip()}
        defaults = {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "openmemd",
                    "keepalives_idle": KEEPALIVE_IDLE_S,
                    "keepalives_interval": KEEPALIVE_INTERVAL_S,
                    "keepalives_count": KEEPALIVE_COUNT, "tcp_user_timeout": TCP_USER_TIMEOUT_MS}
        out.update({k: v for k, v in defaults.items() if k not in given})
        return out

    def scrub(self, message: str) -> str:
        """A driver message with any copy of the password removed."""
        pw = url_password(self.url)
        for secret in {pw, unquote(pw)} if pw else ():
            if secret:
                message = message.replace(secret, "***")
        return re.sub(r"password=\S+", "password=***", message)


def connect(target: PgConnectSpec) -> psycopg.Connection[TupleRow]:
    """A direct connection (the schema, the writer, upkeep). Every store's first statement
    runs on one of these, so a database that is not UTF-8 is refused before any pool
    connection is made to it."""
    with translated(target, "connecting to"):
        try:
            conn = psycopg.connect(target.url, **target.kwargs())
        except psycopg.ProgrammingError as exc:  # libpq refused the connection string
            raise ConfigError(f"store.url {target.shown} is not usable: "
                              f"{target.scrub(_first_line(exc))}") from None
    try:
        _require_utf8(conn, target)
    except BaseException:
        conn.close()
        raise
    return conn


def _require_utf8(conn: psycopg.Connection[Any], target: PgConnectSpec) -> None:
    """Refuse a database whose encoding is not UTF-8. `initdb` takes the shell's locale; in
    a shell without LANG that is SQL_ASCII, where the server converts nothing and psycopg
    hands every text value back as bytes: each file was skipped with an AttributeError and
    `index` reported "0 indexed". (Another encoding could not hold every note either.)"""
    encoding = conn.info.parameter_status("server_encoding") or "unknown"
    if encoding == "UTF8":
        return
    raise ConfigError(
        f"store.url {target.shown} names a database encoded {encoding}, and openmemd needs "
        "UTF8: create one with `createdb --encoding=UTF8 --template=template0 NAME` (or a "
        "server with `initdb --encoding=UTF8 --locale=C.UTF-8`) and point store.url at it")


def configure_session(conn: psycopg.Connection[TupleRow]) -> None:
    """Per-connection settings for readers: the vector type adapter and HNSW recall."""
    from pgvector.psycopg import register_vector

    try:
        register_vector(conn)
    except psycopg.ProgrammingError:
        # pgvector is gone from the database (dropped, a partial restore): keyword searches
        # still work, and the first vector statement reports the damage, which has the store
        # create it again (and these connections made again with its new types)
        pass
    conn.execute(f"SET hnsw.ef_search = {HNSW_EF_SEARCH}")
    conn.execute("SET hnsw.iterative_scan = strict_order")


def make_pool(target: PgConnectSpec, max_size: int) -> Pool:
    pool: Pool = psycopg_pool.ConnectionPool(
        target.url, kwargs=target.kwargs(), min_size=0, max_size=max(1, max_size),
        open=False, configure=configure_session, check=psycopg_pool.ConnectionPool.check_connection,
        timeout=POOL_WAIT_S, reconnect_timeout=0, name="openmemd")
    pool.open(wait=False)
    return pool


def libpq_keywords() -> frozenset[str]:
    """Every keyword libpq takes in a connection string (host, dbname, sslrootcert, ...)."""
    return frozenset(o.keyword.decode() for o in psycopg.pq.Conninfo.get_defaults())


@contextmanager
def translated(target: PgConnectSpec, doing: str) -> Iterator[None]:
    """Driver errors -> openmemd errors: unreachable, gone or timed out = StoreUnavailableError;
    out of space = DiskFullError; a refused value = RowRejectedError."""
    try:
        yield
    except OpenmemdError:
        raise
    except (pg_errors.UndefinedTable, pg_errors.UndefinedObject, pg_errors.UndefinedColumn,
            pg_errors.UndefinedFunction) as exc:
        raise SchemaDamagedError(
            f"the openmemd schema at {target.shown} is damaged ({doing} it: "
            f"{target.scrub(_first_line(exc))})") from None
    except psycopg.ProgrammingError as exc:
        if "cannot adapt type" not in str(exc):
            raise
        # psycopg's own refusal: this connection has no vector type (configure_session found
        # pgvector gone), so the schema is what is damaged
        raise SchemaDamagedError(f"the openmemd schema at {target.shown} is damaged ({doing} "
                                 "it: pgvector's vector type is missing)") from None
    except pg_errors.DiskFull as exc:
        raise DiskFullError(f"PostgreSQL at {target.shown} is out of disk space: "
                            f"{target.scrub(_first_line(exc))}") from None
    except pg_errors.QueryCanceled as exc:
        reason = target.scrub(_first_line(exc))
        if "statement timeout" not in reason:  # cancelled: by an administrator, or by close()
            raise StoreUnavailableError(
                f"PostgreSQL at {target.shown} cancelled a statement ({doing} it): "
                f"{reason}") from None
        raise StoreUnavailableError(
            f"a statement to PostgreSQL at {target.shown} ({doing} it) ran past its time limit "
            f"(store.statement_timeout_ms = {target.statement_timeout_ms} ms for queries; "
            f"batch writes, rebuilds and upkeep have their own): {reason}") from None
    except (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout) as exc:
        raise StoreUnavailableError(
            f"PostgreSQL at {target.shown} is unavailable ({doing} it failed): "
            f"{target.scrub(_first_line(exc)) or type(exc).__name__}") from None
    except (psycopg.DataError, psycopg.IntegrityError) as exc:
        raise RowRejectedError(f"PostgreSQL refused the rows: "
                               f"{target.scrub(_first_line(exc))}") from None


class SchemaDamagedError(IndexDamagedError):
    """A table, index or configuration of the openmemd schema is gone (dropped by hand, lost
    in a partial restore): the store ensures its schema again before its next statement, and
    the index heals as any damaged one does (refilled from the Markdown)."""


class Outage:
    """Remembers that the server was unreachable, so readers fail fast: while it is down each
    call makes one direct connection attempt (refused at once) instead of waiting on the pool,
    and the first attempt that succeeds ends the outage."""

    def __init__(self, target: PgConnectSpec) -> None:
        self._target = target
        self.reason: str | None = None
        self.schema_damaged = False  # set by a SchemaDamagedError; the store repairs, clears

    def check(self) -> None:
        if self.reason is None:
            return
        connect(self._target).close()  # raises StoreUnavailableError while still down
        self.reason = None

    @contextmanager
    def watch(self) -> Iterator[None]:
        try:
            yield
        except SchemaDamagedError:
            self.schema_damaged = True  # the server answers: not an outage
            raise
        except StoreUnavailableError as exc:
            if "took longer than" not in str(exc):  # a slow query is not an outage
                self.reason = str(exc)
            raise


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0]
