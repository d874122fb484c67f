"""`MemoryIndex.status()`: files on disk against the index, the provider, the vector mode and
the last sync, read without taking the writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openmemd.api.maintainer import Maintainer
from openmemd.api.searcher import Searcher
from openmemd.errors import UnavailableError
from openmemd.index import identity as ident
from openmemd.index.scan import scan_workspace
from openmemd.store.base import IndexStore


def _store_facts(store: IndexStore) -> dict[str, Any]:
    """The backend and where the index lives (no password), with the backend's own facts:
    engine and extension versions, and on PostgreSQL the namespaces and whether the server
    answers."""
    facts: dict[str, Any] = {"backend": store.backend, "location": store.location()}
    try:
        facts.update(store.status())
    except UnavailableError as exc:
        facts["error"] = str(exc)
    return facts


def index_status(maintainer: Maintainer, searcher: Searcher, *, agent_id: str,
                 db_path: Path) -> dict[str, Any]:
    """What `status` reports about one index (the daemon adds its own fields)."""
    m = maintainer
    store, settings, provider = m.store, m.settings, m.provider
    on_disk = scan_workspace(m.scope)
    info: dict[str, Any] = {
        "agent": agent_id, "workspace": str(m.scope.workspace), "dbPath": str(db_path),
        "sources": list(settings.sources), "extraPaths": list(settings.extra_paths),
        "provider": {
            "requested": settings.embedding.provider,
            "id": provider.id if provider else "none",
            "model": m.model,
            "dims": m.dims(probe=False),
            "unavailableReason": m.choice.unavailable_reason or m.health.error or None,
        },
        "searchMode": ("hybrid" if provider is not None and not m.health.problem
                       else "fts-only"),
        "recovery": m.recovery.to_dict(rebuilding=m.rebuilding) if m.recovery else None,
        "files": {"onDisk": len(on_disk), "indexed": 0},
        "chunks": 0, "pendingVectors": 0,
        "vector": {"available": False, "mode": "none", "reason": "", "dims": None},
        "fts": {"available": True, "tokenizer": store.fts_tokenizer},
        "cache": {"enabled": settings.cache.enabled, "entries": 0,
                  "maxEntries": settings.cache.max_entries},
        "lastSync": {"at": m.last_sync_at, "error": m.last_sync_error or None,
                     "report": m.last_report.to_dict() if m.last_report else None},
        "bySource": {}, "indexExists": False, "reindexNeeded": [],
        "store": _store_facts(store),
    }
    try:
        info["indexExists"] = store.exists()
        if not info["indexExists"]:
            return info
        reader = store.reader()
        stats = reader.stats(m.model if provider is not None else None,
                             derived=m.embed_derived)
        stored = reader.stored_files()
        meta = reader.read_meta()
        mode = store.vector_mode()
    except UnavailableError as exc:
        info["indexError"] = f"index unreadable: {searcher.failure(exc)}"
        return info
    if m.rebuilding and m.recovery:
        reason = m.recovery.recovery.reason
        info["indexError"] = f"index damaged ({reason}); rebuilding from the Markdown"
    disk = {e.path: e for e in on_disk}
    stale = sum(1 for p, e in disk.items()
                if p not in stored or stored[p].mtime != e.mtime_ms
                or stored[p].size != e.size)
    info["files"] = {"onDisk": len(on_disk), "indexed": stats.files, "stale": stale,
                     "deletedOnDisk": len(stored.keys() - disk.keys())}
    info["chunks"] = stats.chunks
    info["pendingVectors"] = stats.pending_vectors if provider is not None else 0
    info["cache"]["entries"] = stats.cache_entries
    info["bySource"] = {source: dict(counts) for source, counts in stats.by_source.items()}
    dims = (meta or {}).get("vectorDims")
    if provider is None:
        info["vector"] = {"available": False, "mode": "disabled",
                          "reason": "no embedding provider (keyword-only)", "dims": None}
    else:
        info["vector"] = {"available": mode.available, "mode": mode.mode,
                          **({"version": mode.version} if mode.version else {}),
                          "reason": mode.reason, "dims": dims,
                          # counted by the store where its vector index can count them
                          **({"vectors": stats.vectors} if mode.version else {})}
    info["reindexNeeded"] = [] if meta is None else ident.differences(
        meta, m.identity(probe=False).to_meta())
    return info
