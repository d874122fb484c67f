"""The whole index, streamed row by row, for `openmemd store copy` (store.base.StoreReader).

Vectors come from the JSON copy in `chunks.embedding` / `embedding_cache.embedding` (OpenClaw's
format, always present; "[]" while a vector is pending) as float32, exactly what was stored.
`fts_text` is derived again from the original text (`text.tokens.fts_index_text`, what the
writer stores): an OpenClaw index's keyword rows are not aligned with its chunks by rowid, and
the copy's keyword index must use this tokenization anyway.
"""

from __future__ import annotations

from collections.abc import Iterator

from openmemd.store.base import CacheEntry, CacheKey, ChunkRow, StoredFileRecord, Vector
from openmemd.store.sqlite.cache import json_to_vector
from openmemd.store.sqlite.db import Connection
from openmemd.text.tokens import fts_index_text

_SIGNALS = "openmemd_file_signals"


def _vector(text: str | None) -> Vector | None:
    if not text:
        return None
    try:
        v = json_to_vector(text)
    except ValueError:  # a damaged row exports as pending: the copy embeds it again
        return None
    return v if v.ndim == 1 and v.size else None


def export_files(conn: Connection) -> Iterator[StoredFileRecord]:
    """Every file row, by path; ctime_ns and inode 0 where no signals were stored."""
    signals = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?",
                           (_SIGNALS,)).fetchone() is not None
    sql = ("SELECT f.path, f.source, f.hash, f.mtime, f.size, coalesce(s.ctime_ns, 0), "
           f"coalesce(s.ino, 0) FROM files f LEFT JOIN {_SIGNALS} s ON s.path = f.path "
           "ORDER BY f.path" if signals else
           "SELECT path, source, hash, mtime, size, 0, 0 FROM files ORDER BY path")
    for path, source, hash_, mtime, size, ctime_ns, ino in conn.execute(sql):
        yield StoredFileRecord(path=path, source=source, hash=hash_, mtime=int(mtime),
                               size=int(size), ctime_ns=int(ctime_ns), ino=int(ino))


def export_chunks(conn: Connection) -> Iterator[ChunkRow]:
    """Every chunk with its vector (None while pending), a file's chunks together."""
    for row in conn.execute(
            "SELECT id, path, source, start_line, end_line, hash, model, text, embedding, "
            "updated_at FROM chunks ORDER BY path, id"):
        cid, path, source, start, end, hash_, model, text, embedding, updated_at = row
        yield ChunkRow(id=cid, path=path, source=source, start_line=int(start),
                       end_line=int(end), hash=hash_, model=model, text=text,
                       fts_text=fts_index_text(text), vector=_vector(embedding),
                       updated_at=int(updated_at))


def export_cache(conn: Connection) -> Iterator[CacheEntry]:
    """Every readable embedding-cache entry, by key and hash (a damaged one is left out)."""
    for provider, model, provider_key, hash_, embedding, updated_at in conn.execute(
            "SELECT provider, model, provider_key, hash, embedding, updated_at "
            "FROM embedding_cache ORDER BY provider, model, provider_key, hash"):
        vector = _vector(embedding)
        if vector is not None:
            yield CacheEntry(key=CacheKey(provider, model, provider_key), hash=hash_,
                             vector=vector, updated_at=int(updated_at))
