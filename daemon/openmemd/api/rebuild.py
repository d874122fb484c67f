"""A full rebuild's build step: the fresh index the store hands over (`IndexStore.rebuild`,
which swaps it in when complete and has already carried the embedding cache over), filled from
the Markdown, reusing every cached embedding."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmemd.index.sync import Progress, SyncReport
from openmemd.store.base import StoreWriter

if TYPE_CHECKING:
    from openmemd.api.memory_index import MemoryIndex


def build_index(index: MemoryIndex, writer: StoreWriter, progress: Progress | None,
                fill_vectors: bool) -> SyncReport:
    with writer.transaction():
        writer.write_meta(index.identity().to_meta())
    indexer = index._indexer(writer)
    report = indexer.sync(force=True, progress=progress)
    report.merge(indexer.fill_vectors(progress=progress) if fill_vectors
                 else SyncReport(vectors_pending=indexer.pending_vectors()))
    if index.settings.cache.enabled and index.settings.cache.max_entries:
        with writer.transaction():
            writer.cache_prune(index.settings.cache.max_entries)
    report.reindexed = True
    return report
