"""The PostgreSQL schema: OpenClaw's tables with a namespace column, in a schema of its own.

Everything lives in the `openmemd` schema, so the database can hold other things. Every row of
`files`, `chunks`, `skipped`, `ns_meta`, `ns_stats` and `ns_lexemes` carries its namespace
(many daemons share one database); `embedding_cache` is shared by all namespaces (a team
embeds a shared document once). `chunks.fts` is the keyword index of the CJK-expanded text
(see fts.py) and `chunks.doclen` its token count, so the keyword leg can compute FTS5's BM25
exactly. `ns_lexemes` holds n(q) per namespace and lexeme (how many of its chunks' `fts`
contain it), kept by the writer in the same transaction as the chunks, so a query never counts
a common word's matches through the GIN index (version 2; a version-1 database gets it filled
in place).

Vectors are `vector` (float32) without a fixed dimension (namespaces may use different
models), plus a `dims` column; each dimension in use gets its own partial HNSW index on
`embedding::halfvec(dims)` (cosine), built by `PgStore.maintain` once that size has enough
vectors to need one (below that, the exact scan is fast and exact). The index is on halfvec:
it is much smaller than on float32 with the same recall, and the reader re-ranks what it
returns by the float32 distance, so scores stay exact. It is built with ef_construction 128
(pgvector's default is 64): a graph built with a wider search lets queries search narrower for
the same recall, at twice the build time (docs/postgres-scale.md, "Graph parameters").

The schema is created on first use under a transaction-level advisory lock (two daemons
starting together do not race) and versioned by the `meta` row `schema_version`: a database
written by a newer openmemd is refused with a clear message, never "repaired".
"""

from __future__ import annotations

import enum
import uuid

import psycopg
from psycopg.rows import TupleRow

from openmemd.errors import UnavailableError
from openmemd.log import get_logger

log = get_logger(__name__)
SCHEMA = "openmemd"
SCHEMA_VERSION = 2
FTS_CONFIG = f"{SCHEMA}.fts"
# Below this many vectors of one size an exact scan is fast (and exact); past it `maintain`
# builds the HNSW index, once, after the bulk of the index is written rather than row by row.
HNSW_MIN_VECTORS = 20_000
# The keyword leg's sample index (keyword.py): a GIN index over the chunks whose id hashes to
# one of SAMPLE_SHARDS buckets, so a query for a common word builds a bitmap a sixteenth the
# size. `{c}` is the table's alias with its dot, or nothing.
SAMPLE_SHARDS = 16
SAMPLE_PREDICATE = f"(hashtext({{c}}id) & {SAMPLE_SHARDS - 1}) = 0"
SAMPLE_INDEX = "chunks_fts_sample"
_SAMPLE_DEFINITION = f"USING gin (fts) WHERE {SAMPLE_PREDICATE.format(c='')}"
# Any constant: serialises schema creation between daemons.
_DDL_LOCK = 0x6F6D_6464_0001
# Token types the default parser can produce from fts.prepare()'s words-and-spaces text.
_TOKEN_TYPES = ("asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, "
                "hword_part, hword_numpart, email, protocol, url, host, url_path, file, sfloat, "
                "float, int, uint, version, tag, entity")


class SchemaTooNewError(UnavailableError):
    """The database was written by a newer openmemd; this one does not touch it."""


_DDL = f"""
CREATE SCHEMA IF NOT EXISTS {SCHEMA};
CREATE TABLE IF NOT EXISTS {SCHEMA}.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS {SCHEMA}.ns_meta (
  ns text NOT NULL, key text NOT NULL, value text NOT NULL, PRIMARY KEY (ns, key));
CREATE TABLE IF NOT EXISTS {SCHEMA}.ns_stats (
  ns text PRIMARY KEY, docs bigint NOT NULL DEFAULT 0, tokens bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS {SCHEMA}.files (
  ns text NOT NULL, path text NOT NULL, source text NOT NULL DEFAULT 'memory',
  hash text NOT NULL, mtime bigint NOT NULL, size bigint NOT NULL,
  ctime_ns bigint NOT NULL DEFAULT 0, ino bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (ns, path));
CREATE TABLE IF NOT EXISTS {SCHEMA}.chunks (
  ns text NOT NULL, id text NOT NULL, path text NOT NULL,
  source text NOT NULL DEFAULT 'memory', start_line integer NOT NULL,
  end_line integer NOT NULL, hash text NOT NULL, model text NOT NULL, text text NOT NULL,
  fts tsvector NOT NULL, doclen integer NOT NULL,
  embedding vector, dims integer, updated_at bigint NOT NULL,
  PRIMARY KEY (ns, id));
CREATE INDEX IF NOT EXISTS chunks_ns_path ON {SCHEMA}.chunks (ns, path);
CREATE INDEX IF NOT EXISTS chunks_pending ON {SCHEMA}.chunks (ns, model) WHERE embedding IS NULL;
CREATE INDEX IF NOT EXISTS chunks_fts ON {SCHEMA}.chunks USING gin (fts);
CREATE INDEX IF NOT EXISTS {SAMPLE_INDEX} ON {SCHEMA}.chunks {_SAMPLE_DEFINITION};
CREATE TABLE IF NOT EXISTS {SCHEMA}.embedding_cache (
  provider text NOT NULL, model text NOT NULL, provider_key text NOT NULL, hash text NOT NULL,
  embedding vector NOT NULL, dims integer NOT NULL, updated_at bigint NOT NULL,
  PRIMARY KEY (provider, model, provider_key, hash));
CREATE INDEX IF NOT EXISTS embedding_cache_updated_at ON {SCHEMA}.embedding_cache (updated_at);
CREATE TABLE IF NOT EXISTS {SCHEMA}.ns_lexemes (
  ns text NOT NULL, lexeme text NOT NULL, docs integer NOT NULL, PRIMARY KEY (ns, lexeme));
CREATE TABLE IF NOT EXISTS {SCHEMA}.skipped (
  ns text NOT NULL, name bytea NOT NULL, source text NOT NULL, mtime bigint NOT NULL,
  size bigint NOT NULL, ctime_ns bigint NOT NULL, ino bigint NOT NULL, path text NOT NULL,
  reason text NOT NULL, PRIMARY KEY (ns, name));
"""

# English stemming without stop words: FTS5's porter tokenizer keeps every word, and BM25's
# document lengths must count them all (fts.py says why snowball stands in for porter).
_FTS_DDL = f"""
CREATE TEXT SEARCH DICTIONARY {SCHEMA}.english_all (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION {FTS_CONFIG} (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION {FTS_CONFIG} ALTER MAPPING FOR {_TOKEN_TYPES}
  WITH {SCHEMA}.english_all;
"""


# n(q) per namespace and lexeme, from the stored tsvectors (version 1 -> 2 migration).
_FILL_LEXEMES = f"""
INSERT INTO {SCHEMA}.ns_lexemes(ns, lexeme, docs)
SELECT c.ns, u.lexeme, count(*) FROM {SCHEMA}.chunks c, unnest(c.fts) u GROUP BY 1, 2
ON CONFLICT (ns, lexeme) DO UPDATE SET docs = excluded.docs
"""
# Whole-table statements (the migration's fill, a rebuild's swap, heal) and the writer's batch
# statements (bulk.py) touch many rows of an index: they get a bound of their own instead of
# store.statement_timeout_ms, sized for one request.
BULK_TIMEOUT = "30min"
BULK_TIMEOUT_SQL = f"SET LOCAL statement_timeout = '{BULK_TIMEOUT}'"


def ensure_schema(conn: psycopg.Connection[TupleRow]) -> None:
    """Create what is missing, or refuse a newer schema. Idempotent; safe to race."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        _ensure_tables(conn)


def _ensure_tables(conn: psycopg.Connection[TupleRow]) -> None:
    exists = conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.meta",)).fetchone()
    if exists and exists[0] is not None:
        row = conn.execute(f"SELECT value FROM {SCHEMA}.meta WHERE key = 'schema_version'"
                           ).fetchone()
        found = int(row[0]) if row else 0
        if found > SCHEMA_VERSION:
            raise SchemaTooNewError(
                f"the openmemd schema in this database is version {found}, newer than "
                f"this openmemd understands ({SCHEMA_VERSION}); upgrade openmemd (it "
                "leaves the database untouched)")
        if found == SCHEMA_VERSION:
            _repair(conn)
            return
    fresh = exists is None or exists[0] is None
    if fresh and len(missing_parts(conn)) < len(_TABLES) + len(_INDEXES) + 1:
        # no version row, yet parts of a schema: a damaged one (every version had `meta`)
        _repair(conn)
        _set_version(conn)
        return
    lexemes = None if fresh else conn.execute(
        "SELECT to_regclass(%s)", (f"{SCHEMA}.ns_lexemes",)).fetchone()
    had_lexemes = lexemes is not None and lexemes[0] is not None
    conn.execute(_DDL)
    if not fresh and not had_lexemes:
        # version 1 -> 2: the lexeme counts of the chunks already stored, in one pass
        conn.execute(BULK_TIMEOUT_SQL)
        conn.execute(_FILL_LEXEMES)
    if not _has_fts_config(conn):
        conn.execute(_FTS_DDL)
    _set_version(conn)


def _set_version(conn: psycopg.Connection[TupleRow]) -> None:
    conn.execute(f"INSERT INTO {SCHEMA}.meta(key, value) VALUES ('schema_version', %s)"
                 " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                 (str(SCHEMA_VERSION),))


# What a current schema has; anything missing (dropped by hand, lost in a partial restore)
# is created again by `_repair`.
_TABLES = ("meta", "ns_meta", "ns_stats", "files", "chunks", "embedding_cache", "ns_lexemes",
           "skipped")
# (the sample index and the HNSW indexes are upkeep's, built concurrently by `maintain`)
_INDEXES = ("chunks_ns_path", "chunks_pending", "chunks_fts", "embedding_cache_updated_at")
# The rows that describe the chunks of every namespace; without `files` or `chunks` the rest
# no longer match what is stored, so all of it goes and each daemon indexes its Markdown again.
_CONTENT = ("files", "chunks", "skipped", "ns_stats", "ns_lexemes")
# A `meta` row given a new value whenever a repair empties every namespace's content, so the
# other processes sharing the database notice (generation.py).
CONTENT_GENERATION = "content_generation"
_VECTOR_TABLES = ("chunks", "embedding_cache")
_FILL_STATS = f"""
INSERT INTO {SCHEMA}.ns_stats(ns, docs, tokens)
SELECT ns, count(*), coalesce(sum(doclen), 0) FROM {SCHEMA}.chunks GROUP BY ns
"""


def missing_parts(conn: psycopg.Connection[TupleRow]) -> list[str]:
    """The tables, indexes, vector columns (gone with `DROP EXTENSION vector CASCADE`) and
    text search configuration of the schema that do not exist."""
    names = [*_TABLES, *_INDEXES]
    rows = conn.execute("SELECT n FROM unnest(%s::text[]) n WHERE to_regclass(%s || '.' || n)"
                        " IS NULL", (names, SCHEMA)).fetchall()
    columns = conn.execute(
        "SELECT t || '.embedding' FROM unnest(%s::text[]) t WHERE to_regclass(%s || '.' || t)"
        " IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass("
        "%s || '.' || t) AND attname = 'embedding' AND NOT attisdropped)",
        (list(_VECTOR_TABLES), SCHEMA, SCHEMA)).fetchall()
    fts = [] if _has_fts_config(conn) else ["fts"]
    return [str(r[0]) for r in rows] + [str(r[0]) for r in columns] + fts


def _has_fts_config(conn: psycopg.Connection[TupleRow]) -> bool:
    return conn.execute("SELECT 1 FROM pg_ts_config c JOIN pg_namespace n ON n.oid ="
                        " c.cfgnamespace WHERE n.nspname = %s AND c.cfgname = 'fts'",
                        (SCHEMA,)).fetchone() is not None


def _repair(conn: psycopg.Connection[TupleRow]) -> None:
    """Create again what is missing from a current schema, and make the rest agree with it:
    the counters are counted again from the chunks; without files or chunks, the content of
    every namespace is emptied, so each daemon's next sync indexes its Markdown again (the
    embedding cache, if it is still there, spares the re-embedding)."""
    missing = missing_parts(conn)
    if not missing:
        return
    conn.execute(BULK_TIMEOUT_SQL)  # whole-table statements
    if "chunks.embedding" in missing:  # the vectors went with it: all wait to be embedded
        conn.execute(f"ALTER TABLE {SCHEMA}.chunks ADD COLUMN embedding vector")
        conn.execute(f"UPDATE {SCHEMA}.chunks SET dims = NULL")
    if "embedding_cache.embedding" in missing:  # entries without their vector are nothing
        conn.execute(f"DELETE FROM {SCHEMA}.embedding_cache")
        conn.execute(f"ALTER TABLE {SCHEMA}.embedding_cache ADD COLUMN embedding vector NOT NULL")
    if "fts" in missing:  # the same configuration again: the stored tsvectors stay valid
        conn.execute(f"DROP TEXT SEARCH DICTIONARY IF EXISTS {SCHEMA}.english_all CASCADE")
        conn.execute(_FTS_DDL)
    conn.execute(_DDL)
    emptied = bool({"files", "chunks"} & set(missing))
    if emptied:
        for table in _CONTENT:
            conn.execute(f"DELETE FROM {SCHEMA}.{table}")
        conn.execute(f"INSERT INTO {SCHEMA}.meta(key, value) VALUES (%s, %s) ON CONFLICT (key)"
                     " DO UPDATE SET value = excluded.value",
                     (CONTENT_GENERATION, uuid.uuid4().hex))
    else:
        if "ns_stats" in missing:
            conn.execute(_FILL_STATS)
        if "ns_lexemes" in missing:
            conn.execute(_FILL_LEXEMES)
    log.warning("store_schema_repaired", missing=missing, content_emptied=emptied)


# The HNSW index of one vector size is HNSW_PREFIX + dims; the name carries the build
# parameters, so a database indexed with others gets this index built beside its old one.
HNSW_PREFIX = "chunks_hnsw_m16_efc128_"
_HNSW_PARAMS = "m = 16, ef_construction = 128"
# What earlier openmemd versions built for a vector size: on float32, then on halfvec with
# pgvector's default parameters (m 16, ef_construction 64).
_SUPERSEDED_HNSW = ("chunks_hnsw_{dims}", "chunks_hnsw_half_{dims}")


class Build(enum.Enum):
    """What asking for an index did."""

    BUILT = "built now"
    PRESENT = "already there"
    ELSEWHERE = "being built by another daemon"


def ensure_hnsw(conn: psycopg.Connection[TupleRow], dims: int) -> Build:
    """The partial halfvec HNSW index for vectors of `dims` (cosine), built as
    `_build_concurrently` does. An index an earlier openmemd built for `dims` keeps serving
    searches during the build, and is dropped once this one is valid."""
    dims = int(dims)
    outcome = _build_concurrently(conn, f"{HNSW_PREFIX}{dims}",
                                  f"USING hnsw ((embedding::halfvec({dims})) halfvec_cosine_ops)"
                                  f" WITH ({_HNSW_PARAMS}) WHERE dims = {dims}")
    if outcome is not Build.ELSEWHERE:
        for old in _SUPERSEDED_HNSW:
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {SCHEMA}.{old.format(dims=dims)}")
    return outcome


def ensure_fts_sample(conn: psycopg.Connection[TupleRow]) -> Build:
    """The keyword leg's sample index (a database created before it has none), built as
    `_build_concurrently` does."""
    return _build_concurrently(conn, SAMPLE_INDEX, _SAMPLE_DEFINITION)


def _build_concurrently(conn: psycopg.Connection[TupleRow], name: str, definition: str) -> Build:
    """Index `name` on chunks, built CONCURRENTLY (writers of every namespace keep writing
    meanwhile) on an autocommit connection, unless a valid one exists or another daemon is
    building it. An interrupted concurrent build leaves an invalid index: it is dropped and
    redone.

    A build in progress is an invalid index too, so telling the two apart takes the builder's
    advisory lock: it is held for the build by the builder's session, which a builder killed
    half-way no longer has. Without it, a second daemon starting during a build (an HNSW build
    at 1M chunks takes 20 minutes) would drop the index being built: its DROP waits for the
    build to finish, then throws the finished index away and builds it again."""
    if _index_validity(conn, name).get(name):
        return Build.PRESENT
    key = f"openmemd-index:{name}"
    row = conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)).fetchone()
    if not (row and row[0]):
        return Build.ELSEWHERE
    try:
        valid = _index_validity(conn, name).get(name)  # a build may have ended meanwhile
        if valid:
            return Build.PRESENT
        if valid is not None:
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {SCHEMA}.{name}")
        try:
            conn.execute(f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {SCHEMA}.chunks"
                         f" {definition}")
        except psycopg.errors.DuplicateTable:
            # Created at the same moment by a session that takes no build lock (an older
            # openmemd): its build may still be running, so it is looked at again next time.
            return Build.ELSEWHERE
        return Build.BUILT
    finally:
        try:
            conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
        except psycopg.Error:
            pass  # the connection is gone, and its lock with it


def dims_needing_hnsw(conn: psycopg.Connection[TupleRow]) -> list[int]:
    """Vector sizes with at least HNSW_MIN_VECTORS stored vectors (all namespaces)."""
    rows = conn.execute(f"SELECT dims FROM {SCHEMA}.chunks WHERE dims IS NOT NULL GROUP BY dims"
                        " HAVING count(*) >= %s", (HNSW_MIN_VECTORS,)).fetchall()
    return [int(r[0]) for r in rows]


def hnsw_dims(conn: psycopg.Connection[TupleRow]) -> set[int]:
    """Vector sizes with a valid current HNSW index. An invalid one (a concurrent build that
    was interrupted) does not count: searches cannot use it, and `ensure_hnsw` redoes it."""
    return {int(name.rsplit("_", 1)[1])
            for name, valid in _index_validity(conn, HNSW_PREFIX).items() if valid}


def _index_validity(conn: psycopg.Connection[TupleRow], prefix: str) -> dict[str, bool]:
    """Each index of the openmemd schema whose name starts with `prefix`, and whether it is
    valid (usable by searches; a concurrent build that was interrupted leaves it invalid)."""
    rows = conn.execute("SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c"
                        " ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
                        " WHERE n.nspname = %s AND starts_with(c.relname, %s)",
                        (SCHEMA, prefix)).fetchall()
    return {str(r[0]): bool(r[1]) for r in rows}
