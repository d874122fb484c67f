"""`MemoryIndex.status()`: files on disk against the index, the provider, the vector mode and
the last sync, read without taking the writer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmemd.errors import UnavailableError
from openmemd.index import identity as ident
from openmemd.index.scan import scan_workspace

if TYPE_CHECKING:
    from openmemd.api.memory_index import MemoryIndex


def index_status(index: MemoryIndex) -> dict[str, Any]:
    """What `status` reports about one index (the daemon adds its own fields)."""
    on_disk = scan_workspace(index.scope)
    info: dict[str, Any] = {
        "agent": index.agent_id, "workspace": str(index.workspace), "dbPath": str(index.db_path),
        "sources": list(index.settings.sources), "extraPaths": list(index.settings.extra_paths),
        "provider": {
            "requested": index.settings.embedding.provider,
            "id": index.provider.id if index.provider else "none",
            "model": index.model,
            "dims": index._dims(probe=False),
            "unavailableReason": (index.choice.unavailable_reason
                                  or index.provider_health.error or None),
        },
        "searchMode": ("hybrid" if index.provider is not None
                       and not index.provider_health.problem else "fts-only"),
        "recovery": (index.recovery.to_dict(rebuilding=index.rebuilding)
                     if index.recovery else None),
        "files": {"onDisk": len(on_disk), "indexed": 0},
        "chunks": 0, "pendingVectors": 0,
        "vector": {"available": False, "mode": "none", "reason": "", "dims": None},
        "fts": {"available": True, "tokenizer": index.store.fts_tokenizer},
        "cache": {"enabled": index.settings.cache.enabled, "entries": 0,
                  "maxEntries": index.settings.cache.max_entries},
        "lastSync": {"at": index.last_sync_at, "error": index.last_sync_error or None,
                     "report": index.last_report.to_dict() if index.last_report else None},
        "bySource": {}, "indexExists": index.store.exists(), "reindexNeeded": [],
    }
    if not info["indexExists"]:
        return info
    try:
        reader = index.store.reader()
        stats = reader.stats(index.model if index.provider is not None else None)
        stored = reader.stored_files()
        meta = reader.read_meta()
        mode = index.store.vector_mode()
    except UnavailableError as exc:
        info["indexError"] = f"index unreadable: {index._read_failed(exc)}"
        return info
    if index.rebuilding and index.recovery:
        info["indexError"] = (f"index damaged ({index.recovery.reason}); rebuilding from "
                              "the Markdown")
    disk = {e.path: e for e in on_disk}
    stale = sum(1 for p, e in disk.items()
                if p not in stored or stored[p].mtime != e.mtime_ms
                or stored[p].size != e.size)
    info["files"] = {"onDisk": len(on_disk), "indexed": stats.files, "stale": stale,
                     "deletedOnDisk": len(stored.keys() - disk.keys())}
    info["chunks"] = stats.chunks
    info["pendingVectors"] = stats.pending_vectors if index.provider is not None else 0
    info["cache"]["entries"] = stats.cache_entries
    info["bySource"] = {source: dict(counts) for source, counts in stats.by_source.items()}
    dims = (meta or {}).get("vectorDims")
    if index.provider is None:
        info["vector"] = {"available": False, "mode": "disabled",
                          "reason": "no embedding provider (keyword-only)", "dims": None}
    else:
        info["vector"] = {"available": mode.available, "mode": mode.mode,
                          **({"version": mode.version} if mode.version else {}),
                          "reason": mode.reason, "dims": dims,
                          # counted by the store where its vector index can count them
                          **({"vectors": stats.vectors} if mode.version else {})}
    info["reindexNeeded"] = [] if meta is None else ident.differences(
        meta, index.identity(probe=False).to_meta())
    return info
