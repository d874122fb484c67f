"""The SQL the indexer, status and the date search need, in one place. The caller owns
transactions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from openmemd.store.base import CandidateFilter, MeasuredChunk, StoredFile
from openmemd.store.derived import DERIVED_PREFIX
from openmemd.store.sqlite import vec_log
from openmemd.store.sqlite.db import Connection
from openmemd.store.sqlite.schema import EMPTY_EMBEDDING, filter_sql, has_vec_table


@dataclass(frozen=True)
class SqliteChunkRow:
    """A chunk as this backend stores it: `store.base.ChunkRow` with its vector as OpenClaw's
    JSON text."""

    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    hash: str
    model: str
    text: str
    fts_text: str
    embedding: str  # JSON array text; "[]" until a vector arrives
    updated_at: int


def load_files(conn: Connection) -> dict[str, StoredFile]:
    return {r[0]: StoredFile(*r)
            for r in conn.execute("SELECT path, source, mtime, size FROM files")}


def _glob(pattern: str) -> str:
    """A `StoreReader.chunks_by_path` pattern as SQLite GLOB: `*` stays, GLOB's other special
    characters match themselves."""
    return "*".join(re.sub(r"([\[?*])", r"[\1]", part) for part in pattern.split("*"))


def chunks_by_path(conn: Connection, patterns: Sequence[str], *, limit: int,
                   where: CandidateFilter) -> list[MeasuredChunk]:
    """See `StoreReader.chunks_by_path`. The paths are matched in `files` (one row per file,
    far fewer than chunks), the chunks then read through the path index."""
    if not patterns or limit <= 0:
        return []
    globs = " OR ".join(["path GLOB ?"] * len(patterns))
    clauses = [f"path IN (SELECT path FROM files WHERE {globs})"]
    params: list[object] = [_glob(p) for p in patterns]
    more, more_params = filter_sql(where)
    clauses += more
    params += more_params
    rows = conn.execute(
        "SELECT id, path, source, start_line, end_line, text FROM chunks"
        f" WHERE {' AND '.join(clauses)} ORDER BY path DESC, start_line, id LIMIT ?",
        [*params, limit]).fetchall()
    return [MeasuredChunk(id=cid, path=path, source=source, start_line=int(start),
                          end_line=int(end), text=text, measure=0.0)
            for cid, path, source, start, end, text in rows]


def file_hash(conn: Connection, path: str) -> str | None:
    row = conn.execute("SELECT hash FROM files WHERE path = ?", (path,)).fetchone()
    return None if row is None else row[0]


def delete_file(conn: Connection, path: str, *, vec: bool) -> None:
    """Remove a file and everything derived from it."""
    delete_chunks(conn, path, vec=vec)
    conn.execute("DELETE FROM files WHERE path = ?", (path,))


def delete_chunks(conn: Connection, path: str, *, vec: bool) -> None:
    # FTS rows share their chunk's rowid: FTS5 can only find rows fast by rowid, and a
    # `WHERE path = ?` on its UNINDEXED column would scan the whole table for every file.
    if vec and has_vec_table(conn):
        conn.execute("DELETE FROM chunks_vec WHERE id IN (SELECT id FROM chunks WHERE path = ?)",
                     (path,))
    conn.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE path = ?)",
                 (path,))
    vec_log.note_where(conn, "path = ?", path)
    conn.execute("DELETE FROM chunks WHERE path = ?", (path,))


def insert_chunks(conn: Connection, rows: Iterable[SqliteChunkRow]) -> None:
    """Insert chunks and their keyword rows (FTS rowid = chunk rowid, see delete_chunks)."""
    fts = []
    for r in rows:
        cur = conn.execute(
            "INSERT INTO chunks(id, path, source, start_line, end_line, hash, model, text,"
            " embedding, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (r.id, r.path, r.source, r.start_line, r.end_line, r.hash, r.model, r.text,
             r.embedding, r.updated_at))
        fts.append((cur.lastrowid, r.fts_text, r.id, r.path, r.source, r.model, r.start_line,
                    r.end_line))
    conn.executemany(
        "INSERT INTO chunks_fts(rowid, text, id, path, source, model, start_line, end_line)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", fts)
    vec_log.note_rowids(conn, [f[0] for f in fts])


def upsert_file(conn: Connection, path: str, source: str, file_hash: str, mtime: int,
                size: int) -> None:
    conn.execute(
        "INSERT INTO files(path, source, hash, mtime, size) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT(path) DO UPDATE SET source = excluded.source, hash = excluded.hash,"
        " mtime = excluded.mtime, size = excluded.size",
        (path, source, file_hash, mtime, size))


def touch_file(conn: Connection, path: str, mtime: int, size: int) -> None:
    conn.execute("UPDATE files SET mtime = ?, size = ? WHERE path = ?", (mtime, size, path))


def set_embedding(conn: Connection, chunk_id: str, embedding_json: str, blob: bytes | None
                  ) -> None:
    cur = conn.execute("UPDATE chunks SET embedding = ? WHERE id = ?", (embedding_json, chunk_id))
    if not cur.rowcount:
        return  # the chunk went while its batch embedded (an edit): no orphan vector row
    vec_log.note_where(conn, "id = ?", chunk_id)
    if blob is not None:
        conn.execute("DELETE FROM chunks_vec WHERE id = ?", (chunk_id,))
        conn.execute("INSERT INTO chunks_vec(id, embedding) VALUES (?, ?)", (chunk_id, blob))


# Chunks of derived files (store/derived.py), left out of the pending ones unless asked for.
_NOT_DERIVED = f" AND substr(path, 1, {len(DERIVED_PREFIX)}) <> '{DERIVED_PREFIX}'"


def pending_vectors(conn: Connection, model: str, limit: int,
                    paths: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
    """(id, hash, text) of chunks of `model` still waiting for a vector (of `paths` only,
    in that order, when given)."""
    if paths is None:
        rows = conn.execute(
            "SELECT id, hash, text FROM chunks WHERE model = ? AND embedding = ? LIMIT ?",
            (model, EMPTY_EMBEDDING, limit)).fetchall()
        return [(str(cid), str(h), str(text)) for cid, h, text in rows]
    out: list[tuple[str, str, str]] = []
    for path in paths:
        rows = conn.execute(
            "SELECT id, hash, text FROM chunks WHERE path = ? AND model = ? AND embedding = ?"
            " ORDER BY start_line LIMIT ?",
            (path, model, EMPTY_EMBEDDING, limit - len(out))).fetchall()
        out += [(str(cid), str(h), str(text)) for cid, h, text in rows]
        if len(out) >= limit:
            break
    return out


def count_pending_vectors(conn: Connection, model: str, derived: bool = True) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM chunks WHERE model = ? AND embedding = ?"
                            + ("" if derived else _NOT_DERIVED),
                            (model, EMPTY_EMBEDDING)).fetchone()[0])


def pending_files(conn: Connection, model: str, derived: bool) -> list[tuple[str, str, int]]:
    """(path, source, chunks) of the files with chunks of `model` waiting for a vector."""
    rows = conn.execute("SELECT path, source, COUNT(*) FROM chunks WHERE model = ? AND"
                        " embedding = ?" + ("" if derived else _NOT_DERIVED)
                        + " GROUP BY path, source", (model, EMPTY_EMBEDDING)).fetchall()
    return [(str(p), str(s), int(n)) for p, s, n in rows]


def counts(conn: Connection) -> dict[str, int]:
    files = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
    chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    cache = conn.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0]
    vectors = 0
    if has_vec_table(conn):
        try:
            vectors = conn.execute("SELECT COUNT(*) FROM chunks_vec").fetchone()[0]
        except Exception:  # vec0 unreadable without the extension loaded
            vectors = -1
    return {"files": files, "chunks": chunks, "cache_entries": cache, "vectors": vectors}


def counts_by_source(conn: Connection) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for source, n in conn.execute("SELECT source, COUNT(*) FROM files GROUP BY source"):
        out.setdefault(source, {"files": 0, "chunks": 0})["files"] = n
    for source, n in conn.execute("SELECT source, COUNT(*) FROM chunks GROUP BY source"):
        out.setdefault(source, {"files": 0, "chunks": 0})["chunks"] = n
    return out
