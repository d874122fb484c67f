"""`openmemd doctor` on PostgreSQL: the server answers with the store's own connection
settings, its database is UTF-8 (`connect` refuses another) and pgvector is there. Reads only."""

from __future__ import annotations

from typing import Any

from openmemd.config import StoreSettings
from openmemd.errors import ConfigError, OpenmemdError
from openmemd.store.checks import BackendCheck
from openmemd.store.postgres.connect import PgConnectSpec, connect, translated

NAME = "postgresql"


def check_server(store: StoreSettings) -> BackendCheck:
    target = PgConnectSpec(store.url, store.statement_timeout_ms)
    try:
        conn = connect(target)  # refuses a database that is not UTF-8, saying how to make one
    except ConfigError as exc:
        return BackendCheck(NAME, problem=str(exc), fatal=True,
                            fix="point store.url at a UTF-8 database")
    except OpenmemdError as exc:
        return BackendCheck(NAME, problem=str(exc), fatal=True,
                            fix="start the server, or correct store.url (or OPENMEMD_STORE_URL)")
    try:
        with translated(target, "asking"):
            encoding = _value(conn, "SHOW server_encoding")
            version = _value(conn, "SHOW server_version").split(" ")[0]
            pgvector = _value(conn, "SELECT default_version FROM pg_available_extensions "
                              "WHERE name = 'vector'")
            dbname = conn.info.dbname
    except OpenmemdError as exc:
        return BackendCheck(NAME, problem=str(exc), fatal=True, fix="see the server's log")
    finally:
        conn.close()
    where = f"database {dbname} at {target.shown}"
    if not pgvector:
        return BackendCheck(NAME, problem=f"{where}: the server has no pgvector extension",
                            fatal=True, fix="install pgvector on the server (its package, "
                            "e.g. postgresql-18-pgvector)")
    return BackendCheck(NAME, f"{where} answers: PostgreSQL {version}, encoding {encoding}, "
                        f"pgvector {pgvector} available")


def _value(conn: Any, sql: str) -> str:
    row = conn.execute(sql).fetchone()
    return "" if row is None else str(row[0])
