"""A full rebuild's build step: a fresh index in a temporary database (swapped in by
`index.reindex.build_and_swap` when complete), reusing every cached embedding."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from openmemd.index.sync import Progress, SyncReport
from openmemd.store.sqlite import db, recovery, schema

if TYPE_CHECKING:
    from openmemd.api.memory_index import MemoryIndex


def build_index(index: MemoryIndex, tmp: Path, progress: Progress | None,
                fill_vectors: bool) -> SyncReport:
    conn, vec = db.connect(tmp, check_same_thread=False)
    try:
        schema.ensure_schema(conn)
        recovery.copy_cache_tolerant(conn, index.db_path)
        schema.write_meta(conn, index.identity().to_meta())
        indexer = index._indexer(conn, vec)
        report = indexer.sync(force=True, progress=progress)
        report.merge(indexer.fill_vectors(progress=progress) if fill_vectors
                     else SyncReport(vectors_pending=indexer.pending_vectors()))
        if index.settings.cache.enabled and index.settings.cache.max_entries:
            from openmemd.store.sqlite import cache as embed_cache

            with db.write_transaction(conn):
                embed_cache.prune(conn, index.settings.cache.max_entries)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        report.reindexed = True
        return report
    finally:
        conn.close()
