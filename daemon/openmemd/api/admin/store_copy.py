"""Copy one index into another, whatever backend holds either (`openmemd store copy`).

Only the storage interface is used (`IndexStore.reader()` export streams of the source, the
target's `StoreWriter`), so any pair of backends works and nothing is re-embedded: vectors and
the embedding cache cross as the float32 arrays the interface carries.

It lives in `api` and not in `store`: opening an index by a user's location string needs the
settings (`store.open_store`), and commands reach storage only through `api` (DESIGN.md:
cli -> api -> store); the copy itself names no backend.

Safe to re-run, and safe to interrupt:
- every write is an upsert or a replace (`upsert_file`, `replace_chunks`, `cache_store`,
  `write_meta`), so a second run leaves the target as the first run left it;
- a file row and all its chunks are written in the same transaction, so at every commit the
  target is a consistent index: each file it lists has exactly its chunks (a daemon started
  on a half-copied target indexes what is missing from its Markdown, never trusts a file row
  without chunks);
- one transaction per batch (`batch_chunks` chunks or cache entries), so memory stays flat and
  an interrupted run loses at most one batch; the next run redoes everything.
Files the target has and the source does not are deleted at the end (the target becomes a
copy of the source); its extra embedding-cache entries are kept (a cache only saves time, and
on a shared server other namespaces use it).

The target records its own identity, not the source's: its keyword tokenizer in the meta row
(it tokenizes the rows it is given itself), and, for a database namespace, the agent's
workspace as the one that fills it (its writer refuses a namespace another workspace fills,
until `openmemd store adopt`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from openmemd.config import Settings
from openmemd.errors import BadRequestError, NotFoundError
from openmemd.log import get_logger
from openmemd.store import is_database, open_location
from openmemd.store.base import (
    CacheEntry,
    ChunkRow,
    IndexStore,
    StoredFileRecord,
    StoreWriter,
)

__all__ = ["CopyOrderError", "CopyReport", "copy_between", "copy_index", "open_location"]

log = get_logger("openmemd.store_copy")

T = TypeVar("T")
DEFAULT_BATCH = 2000
Progress = Callable[[str, int], None]  # (what, how many so far)


class CopyOrderError(BadRequestError):
    """The source's chunk export is not grouped by file, so a file cannot be copied whole."""


@dataclass(frozen=True)
class CopyReport:
    source: str  # `IndexStore.location()`: never a password
    target: str
    files: int
    chunks: int
    vectors: int
    cache_entries: int
    removed_files: int
    meta: bool

    def to_dict(self) -> dict[str, object]:
        return {"from": self.source, "to": self.target, "files": self.files,
                "chunks": self.chunks, "vectors": self.vectors,
                "cacheEntries": self.cache_entries, "removedFiles": self.removed_files,
                "meta": self.meta}


def copy_between(source: str, target: str, settings: Settings, agent_id: str, *,
                 namespace: str | None = None, from_namespace: str | None = None,
                 to_namespace: str | None = None, batch_chunks: int = DEFAULT_BATCH,
                 progress: Progress | None = None) -> CopyReport:
    """`openmemd store copy`: open both locations (a SQLite file or a PostgreSQL connection
    string), copy, close. `namespace` applies to whichever side is a database; the per-side
    ones win."""
    src = open_location(source, settings, agent_id,
                        namespace=from_namespace or (namespace if is_database(source) else None))
    try:
        into_db = is_database(target)
        dst = open_location(target, settings, agent_id, create=True,
                            namespace=to_namespace or (namespace if into_db else None),
                            workspace=settings.workspace_for(agent_id) if into_db else None)
        try:
            return copy_index(src, dst, batch_chunks=batch_chunks, progress=progress)
        finally:
            dst.close()
    finally:
        src.close()


def copy_index(source: IndexStore, target: IndexStore, *, batch_chunks: int = DEFAULT_BATCH,
               progress: Progress | None = None) -> CopyReport:
    """Make `target` a copy of `source` (files, chunks with their vectors, the embedding
    cache, the meta row); see the module docstring."""
    if source.location() == target.location():
        raise BadRequestError(f"source and target are the same index: {source.location()}")
    if not source.exists():
        raise NotFoundError(f"no index at {source.location()}")
    batch_chunks = max(1, batch_chunks)
    reader = source.reader()
    writer = target.writer()
    # what the target holds (and, as for the indexer, lets a writer skip deletes for new paths)
    before = set(writer.load_signatures())
    note = progress or (lambda _what, _n: None)

    meta = reader.read_meta()
    if meta is not None:
        # The target tokenizes the keyword rows it is given with its own tokenizer, so the
        # identity it records is that one: the source's name would have the first daemon to
        # open the copy rebuild it ("index identity changed", every chunk written again).
        meta = {**meta, "ftsTokenizer": target.fts_tokenizer}
        with writer.transaction():
            writer.write_meta(meta)
    cache_entries = _copy_cache(writer, reader.export_cache(), batch_chunks, note)
    files = {f.path: f for f in reader.export_files()}
    chunks, vectors = _copy_files(writer, files, reader.export_chunks(), batch_chunks, note)
    gone = sorted(before - set(files))
    for batch in _batched(gone, batch_chunks):
        with writer.transaction():
            for path in batch:
                writer.delete_file(path)
    report = CopyReport(source=source.location(), target=target.location(), files=len(files),
                        chunks=chunks, vectors=vectors, cache_entries=cache_entries,
                        removed_files=len(gone), meta=meta is not None)
    log.info("store.copy.done", **report.to_dict())
    return report


def _copy_cache(writer: StoreWriter, entries: Iterable[CacheEntry], batch: int,
                note: Progress) -> int:
    done = 0
    for group in _batched(entries, batch):
        with writer.transaction():
            # `cache_store` takes one timestamp per call: entries are passed in runs of the
            # same key and time, so each keeps its own `updated_at` (pruning order survives).
            readable = [e for e in group if e.vector.size]  # a damaged entry: not copied
            for (key, updated_at), run in itertools.groupby(
                    readable, key=lambda e: (e.key, e.updated_at)):
                writer.cache_store(key, [(e.hash, e.vector) for e in run], updated_at)
        done += len(readable)
        note("cache entries", done)
    return done


def _copy_files(writer: StoreWriter, files: dict[str, StoredFileRecord],
                rows: Iterable[ChunkRow], batch: int, note: Progress) -> tuple[int, int]:
    """Each file's row and all its chunks in one transaction; several files a transaction."""
    chunks = vectors = 0
    seen: set[str] = set()
    pending: list[tuple[str, list[ChunkRow]]] = []
    size = 0

    def flush() -> None:
        nonlocal pending, size
        with writer.transaction():
            for path, group in pending:  # the indexer's order: chunks, then the file row
                writer.replace_chunks(path, group)
                record = files.get(path)
                if record is not None:
                    writer.upsert_file(record.path, record.source, record.hash, record.mtime,
                                       record.size, record.ctime_ns, record.ino)
        pending, size = [], 0
        note("chunks", chunks)

    for path, run in itertools.groupby(rows, key=lambda r: r.path):
        if path in seen:
            raise CopyOrderError(f"the source's chunks of {path!r} are not exported together; "
                                 f"this copy needs an export grouped by file")
        seen.add(path)
        group = list(run)
        chunks += len(group)
        vectors += sum(1 for r in group if r.vector is not None)
        pending.append((path, group))
        size += len(group)
        if size >= batch:
            flush()
    # files without chunks (empty notes, or not chunked yet): their rows, and no chunks
    for path in files:
        if path not in seen:
            pending.append((path, []))
            size += 1
            if size >= batch:
                flush()
    if pending:
        flush()
    return chunks, vectors


def _batched(items: Iterable[T], n: int) -> Iterator[list[T]]:
    it = iter(items)
    while group := list(itertools.islice(it, n)):
        yield group
