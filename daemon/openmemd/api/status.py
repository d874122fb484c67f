"""`MemoryIndex.status()`: files on disk against the index, the provider, the vector mode and
the last sync, read without taking the writer."""

from __future__ import annotations

from pathlib import Path

from openmemd.api.connected_agents import agent_rows
from openmemd.api.maintainer import Maintainer
from openmemd.api.searcher import Searcher
from openmemd.errors import UnavailableError
from openmemd.index import identity as ident
from openmemd.index.scan import FileEntry, ScanIssue, ScanScope, display_path, walk_workspace
from openmemd.protocol.records import replace
from openmemd.protocol.status import (
    CacheStatus,
    FileCounts,
    FtsStatus,
    IndexStatus,
    LastSync,
    ProviderStatus,
    SkippedPath,
    StoreFacts,
    VectorStatus,
)
from openmemd.store.base import IndexStore, Skipped


def _store_facts(store: IndexStore) -> StoreFacts:
    """The backend and where the index lives (no password), with the backend's own facts:
    engine and extension versions, and on PostgreSQL the namespaces and whether the server
    answers."""
    head = {"backend": store.backend, "location": store.location()}
    try:
        return StoreFacts.from_json({**head, **store.status()})
    except UnavailableError as exc:
        return StoreFacts.from_json({**head, "error": str(exc)})


def links_not_followed(workspace: Path, extra_paths: tuple[str, ...]) -> list[ScanIssue]:
    """The symlinked notes and folders among a workspace's memory paths, each with why
    (`doctor`, which builds no index)."""
    return walk_workspace(ScanScope(workspace, ("memory",), extra_paths)).links


def _skipped_paths(links: list[ScanIssue], disk: dict[str, FileEntry],
                   skips: list[Skipped]) -> tuple[SkippedPath, ...]:
    """The symlinks the walk did not follow, and the files the sync skipped that are as they
    were then (one changed since is read again by the next sync)."""
    shown = {display_path(p): e for p, e in disk.items()}  # as the skip records name them
    return (*(SkippedPath(i.path, i.reason) for i in links),
            *(SkippedPath(s.path, s.reason) for s in skips
              if s.path in shown and s.signature == tuple(shown[s.path][1:])))


def index_status(maintainer: Maintainer, searcher: Searcher, *, agent_id: str,
                 db_path: Path) -> IndexStatus:
    """What `status` reports about one index (the daemon adds its own parts)."""
    m = maintainer
    store, settings, provider = m.store, m.settings, m.provider
    on_disk, links = walk_workspace(m.scope)
    empty = IndexStatus(
        agent=agent_id, workspace=str(m.scope.workspace), db_path=str(db_path),
        sources=tuple(settings.sources), extra_paths=tuple(settings.extra_paths),
        provider=ProviderStatus(
            requested=settings.embedding.provider, id=provider.id if provider else "none",
            model=m.model, dims=m.dims(probe=False),
            unavailable_reason=m.choice.unavailable_reason or m.health.error or None),
        search_mode=("hybrid" if provider is not None and not m.health.problem
                     else "fts-only"),
        recovery=m.recovery.to_dict(rebuilding=m.rebuilding) if m.recovery else None,
        files=FileCounts(on_disk=len(on_disk), indexed=0), chunks=0, pending_vectors=0,
        vector=VectorStatus(available=False, mode="none"),
        fts=FtsStatus(available=True, tokenizer=store.fts_tokenizer),
        cache=CacheStatus(enabled=settings.cache.enabled, entries=0,
                          max_entries=settings.cache.max_entries),
        last_sync=LastSync(at=m.last_sync_at, error=m.last_sync_error or None,
                           report=m.last_report.to_dict() if m.last_report else None),
        by_source={}, index_exists=False, reindex_needed=(), store=_store_facts(store),
        skipped=_skipped_paths(links, {}, []), connected_agents=agent_rows(settings, {}))
    exists = False
    try:
        exists = store.exists()
        if not exists:
            if m.last_sync_at is not None and m.file_replaced():  # built here, then deleted
                if searcher.on_damage is not None:  # the daemon's writer rebuilds it now
                    searcher.on_damage("index file deleted")
                return replace(empty, index_error="the index file is gone (deleted or "
                               "moved); it is being rebuilt from the Markdown")
            return empty
        reader = store.reader()
        stats = reader.stats(m.model if provider is not None else None,
                             derived=m.embed_derived)
        stored = reader.stored_files()
        skips = reader.skipped_files()
        meta = reader.read_meta()
        mode = store.vector_mode()
    except UnavailableError as exc:
        return replace(empty, index_exists=exists,
                       index_error=f"index unreadable: {searcher.failure(exc)}")
    disk = {e.path: e for e in on_disk}
    stale = sum(1 for p, e in disk.items()
                if p not in stored or stored[p].mtime != e.mtime_ms
                or stored[p].size != e.size)
    if provider is None:
        vector = VectorStatus(available=False, mode="disabled",
                              reason="no embedding provider (keyword-only)")
    else:
        vector = VectorStatus(available=mode.available, mode=mode.mode,
                              version=mode.version or None, reason=mode.reason,
                              dims=(meta or {}).get("vectorDims"),
                              vectors=stats.vectors if mode.version else None)
    return replace(
        empty, index_exists=True,
        files=FileCounts(on_disk=len(on_disk), indexed=stats.files, stale=stale,
                         deleted_on_disk=len(stored.keys() - disk.keys())),
        chunks=stats.chunks,
        pending_vectors=stats.pending_vectors if provider is not None else 0,
        vector=vector, cache=replace(empty.cache, entries=stats.cache_entries),
        by_source={source: dict(counts) for source, counts in stats.by_source.items()},
        reindex_needed=() if meta is None else tuple(ident.differences(
            meta, m.identity(probe=False).to_meta())),
        skipped=_skipped_paths(links, disk, skips),
        connected_agents=agent_rows(settings, stored),
        index_error=(f"index damaged ({m.recovery.recovery.reason}); rebuilding from the "
                     "Markdown") if m.rebuilding and m.recovery else None)
