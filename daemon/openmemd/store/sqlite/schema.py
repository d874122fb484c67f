"""The index schema: OpenClaw's six tables, same names and columns, plus migrations.

`chunks_fts.text` holds the chunk text prepared for keyword search (CJK runs expanded into
bigrams, see `openmemd.text.tokens`), so Chinese, Japanese and Korean are searchable with the
word tokenizer; `chunks.text` is always the original text.
"""

from __future__ import annotations

import re
from typing import Any

from openmemd.store.base import CandidateFilter
from openmemd.store.derived import DERIVED_PREFIX
from openmemd.store.meta import meta_from_text, meta_to_text
from openmemd.store.sqlite import vec_log
from openmemd.store.sqlite.db import Connection

SCHEMA_VERSION = 1
META_KEY = "memory_index_meta_v1"
SCHEMA_VERSION_KEY = "openmemd_schema_version"
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
FTS_TOKENIZER_ID = "porter-unicode61+cjk-bi-uni-v1"

# For WHERE clauses on a `path` column: not a derived file (store/derived.py); substr avoids
# LIKE's wildcard and case rules.
SQL_NOT_DERIVED = f"substr(path, 1, {len(DERIVED_PREFIX)}) != '{DERIVED_PREFIX}'"
# `chunks.embedding` of a chunk still waiting for its vector (OpenClaw's empty JSON array).
EMPTY_EMBEDDING = "[]"


def filter_sql(where: CandidateFilter) -> tuple[list[str], list[object]]:
    """`CandidateFilter` as SQL conditions on `chunks` (ANDed) and their parameters."""
    clauses: list[str] = []
    params: list[object] = []
    if where.sources:
        clauses.append(f"source IN ({', '.join('?' * len(where.sources))})")
        params.extend(where.sources)
    if where.model is not None:
        clauses.append("model = ?")
        params.append(where.model)
    if where.skip_derived:
        clauses.append(SQL_NOT_DERIVED)
    return clauses, params

_VEC_DIMS = re.compile(r"float\[\s*(\d+)\s*\]")  # in `chunks_vec`'s CREATE statement

_DDL = f"""
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS files (
  path TEXT PRIMARY KEY,
  source TEXT NOT NULL DEFAULT 'memory',
  hash TEXT NOT NULL,
  mtime INTEGER NOT NULL,
  size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
  id TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'memory',
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  hash TEXT NOT NULL,
  model TEXT NOT NULL,
  text TEXT NOT NULL,
  embedding TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS idx_chunks_source ON chunks(source);
-- The chunks waiting for a vector, which every fill (after each saved file) counts and reads:
-- without it each such query scans the whole table, text and JSON vectors (1.5 s at 100k
-- chunks, four times per edit). Small: a chunk leaves it when its vector is written.
CREATE INDEX IF NOT EXISTS idx_chunks_pending ON chunks(model)
  WHERE embedding = '{EMPTY_EMBEDDING}';
CREATE TABLE IF NOT EXISTS embedding_cache (
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  provider_key TEXT NOT NULL,
  hash TEXT NOT NULL,
  embedding TEXT NOT NULL,
  dims INTEGER,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (provider, model, provider_key, hash)
);
CREATE INDEX IF NOT EXISTS idx_embedding_cache_updated_at ON embedding_cache(updated_at);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
  text,
  id UNINDEXED,
  path UNINDEXED,
  source UNINDEXED,
  model UNINDEXED,
  start_line UNINDEXED,
  end_line UNINDEXED,
  tokenize = '{FTS_TOKENIZER}'
);
"""


def ensure_schema(conn: Connection) -> None:
    """Create missing tables and run migrations. Idempotent."""
    conn.executescript(_DDL)
    _migrate(conn)
    vec_log.ensure_vec_log(conn)
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                 (SCHEMA_VERSION_KEY, str(SCHEMA_VERSION)))


def _migrate(conn: Connection) -> None:
    # OpenClaw databases from before sources existed lack the `source` columns.
    for table in ("files", "chunks"):
        cols = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if "source" not in cols:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN source TEXT NOT NULL DEFAULT 'memory'")


def ensure_vec_table(conn: Connection, dims: int) -> None:
    """Create `chunks_vec` for `dims`; drop and recreate it if its dimension differs."""
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'chunks_vec'").fetchone()
    if row is not None:
        if f"float[{dims}]" in row[0].replace(" ", ""):
            return
        conn.execute("DROP TABLE chunks_vec")
    conn.execute(
        f"CREATE VIRTUAL TABLE chunks_vec USING vec0("
        f"id TEXT PRIMARY KEY, embedding float[{dims}] distance_metric=cosine)")


def vec_table_dims(conn: Connection) -> int | None:
    """The dimension `chunks_vec` was created for, or None without the table."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_vec'").fetchone()
    m = _VEC_DIMS.search(row[0] or "") if row is not None else None
    return int(m.group(1)) if m else None


def has_vec_table(conn: Connection) -> bool:
    return conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'chunks_vec'").fetchone() is not None


def read_meta(conn: Connection) -> dict[str, Any] | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    return None if row is None else meta_from_text(row[0])


def write_meta(conn: Connection, meta: dict[str, Any]) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                 (META_KEY, meta_to_text(meta)))
