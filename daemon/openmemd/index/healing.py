"""The self-healing half of `MemoryIndex`: replacing a damaged index while running (the store
finds the damage and replaces the index, `IndexStore.heal`; this refills it from the Markdown)
and degrading to keyword search while the embedding provider is down.

Kept apart from `openmemd.api` so that module stays about the library's API. Everything here
runs under the index's write lock except `_read_failed` and `_query_vector` (reader threads).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

import numpy as np
from numpy.typing import NDArray

from openmemd.config import Settings
from openmemd.embed.base import EmbeddingError, EmbeddingProvider
from openmemd.embed.shared import ProviderHealth, QueryVectors
from openmemd.errors import IndexLockedError
from openmemd.index.scan import ScanIssue
from openmemd.index.sync import IndexSync, Progress, SyncReport
from openmemd.log import get_logger
from openmemd.store.base import (
    DiskFullError,
    IndexDamagedError,
    IndexStore,
    Recovery,
    StoreReader,
    StoreUnavailableError,
    StoreWriter,
)

if TYPE_CHECKING:
    from openmemd.index.identity import IndexIdentity

log = get_logger(__name__)

T = TypeVar("T")

# What a read can raise about the index itself (the store's errors, see store.base).
_STORE_ERRORS = (IndexDamagedError, DiskFullError, StoreUnavailableError)


@dataclass(frozen=True)
class Healed:
    """The last time a damaged index was replaced (shown by `status` as `recovery`)."""

    at: float
    recovery: Recovery

    def to_dict(self, *, rebuilding: bool) -> dict[str, Any]:
        r = self.recovery
        return {"at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.at)),
                "reason": r.reason, "movedTo": r.moved_to,
                "salvagedEmbeddings": r.salvaged_vectors, "rebuilding": rebuilding}


class SelfHealing:
    """Mixin for MemoryIndex (which provides the attributes used here)."""

    settings: Settings
    store: IndexStore
    provider: EmbeddingProvider | None
    provider_health: ProviderHealth
    recovery: Healed | None
    rebuilding: bool
    vectors_failed: bool
    on_damage: Callable[[str], None] | None
    _write_lock: threading.RLock
    _damage_found: str
    _local: threading.local
    _query_vectors: QueryVectors

    if TYPE_CHECKING:  # MemoryIndex's, used here; declared only for the type checker
        @property
        def model(self) -> str: ...
        def sync(self, force: bool = False, progress: Progress | None = None, *,
                 fill_vectors: bool = True) -> SyncReport: ...
        def _indexer(self, writer: StoreWriter) -> IndexSync: ...
        def identity(self, *, probe: bool = True) -> IndexIdentity: ...

    def _guarded(self, fn: Callable[[], T], progress: Progress | None = None) -> T:
        """Run a write. Damage found before or during it replaces the index and refills it
        from the Markdown first; a full disk (DiskFullError) is the caller's to retry."""
        with self._write_lock:
            try:
                self.store.writer()
                reason, self._damage_found = self.store.damage() or self._damage_found, ""
                if reason:
                    self._replace(reason)
                rebuilt = self._rebuild(progress) if self.rebuilding else None
                return _merged(rebuilt, fn())
            except IndexDamagedError as exc:
                self._replace(str(exc))
                return _merged(self._rebuild(progress), fn())

    def file_replaced(self) -> bool:
        """Whether the index the writer opened was deleted, replaced or found damaged (the
        daemon's periodic check; the next write heals it)."""
        reason = self.store.damage()
        if reason:
            self._damage_found = reason  # damage() reports a confirmed reader error once
        return bool(reason)

    def _replace(self, reason: str) -> None:
        self.recovery = Healed(time.time(), self.store.heal(reason))
        self.rebuilding = True

    def _rebuild(self, progress: Progress | None) -> SyncReport:
        """Keyword rows of every file into the fresh index (salvaged vectors come along)."""
        writer = self.store.writer()
        with writer.transaction():
            writer.write_meta(self.identity().to_meta())
        report = self._indexer(writer).sync(progress=progress)
        report.reindexed = True
        self.rebuilding = False
        log.info("index_rebuilt_after_damage", path=self.store.location(),
                 files=report.indexed, vectors_from_cache=report.vectors_from_cache)
        return report

    def _fill(self, indexer: IndexSync, progress: Progress | None = None,
              should_stop: Callable[[], bool] | None = None) -> SyncReport:
        """Embed pending chunks; a provider that does not answer leaves them pending (keyword
        search meanwhile) with a warning, never fails the sync."""
        try:
            report = indexer.fill_vectors(progress=progress, should_stop=should_stop)
        except EmbeddingError as exc:
            message = self.provider_health.failed(exc)
            self.vectors_failed = True
            report = SyncReport(vectors_pending=indexer.pending_vectors())
            report.warnings.append(ScanIssue("(embeddings)", f"{message}; "
                                   f"{report.vectors_pending} chunk(s) wait for vectors"))
            return report
        self.vectors_failed = False
        if report.vectors_embedded:
            self.provider_health.recovered()
        return report

    def _query_vector(self, query: str) -> tuple[NDArray[np.float32] | None, str]:
        """The query's embedding, or None and why (keyword-only search while it is down)."""
        if self.provider is None:
            return None, ""
        if self.provider_health.skip_queries():
            return None, self.provider_health.problem
        try:
            vector = self._query_vectors.get(self.provider, query)
        except EmbeddingError as exc:
            return None, self.provider_health.failed(exc)
        self.provider_health.recovered()
        return vector, ""

    def search_mode(self) -> dict[str, str]:
        """`mode` of this thread's last search, and why it was keyword-only although a
        provider is set (`degraded`)."""
        degraded = getattr(self._local, "degraded", "")
        if self.provider is None:
            return {"mode": "fts-only"}
        return {"mode": "fts-only", "degraded": degraded} if degraded else {"mode": "hybrid"}

    def search_meta(self) -> dict[str, Any]:
        """What a search reply says besides its results, the same on every way in (CLI,
        socket, MCP): provider, model, mode (and why it degraded), the citations mode and,
        when this thread's last search found nothing, the nearest miss (`nearest`)."""
        nearest = getattr(self._local, "nearest", None)
        return {"provider": self.provider.id if self.provider is not None else "none",
                "model": self.model, **self.search_mode(),
                "citations": self.settings.citations,
                **({"nearest": nearest.to_dict()} if nearest is not None else {})}

    def _read(self, fn: Callable[[StoreReader], T]) -> T:
        """Run `fn(reader)` on this thread's reader. On a damaged index a one-shot caller
        rebuilds it now and retries once; the daemon's readers answer `unavailable` and leave
        the rebuild to its writer (see `on_damage`)."""
        try:
            return fn(self.store.reader())
        except _STORE_ERRORS as exc:
            error = self._read_failed(exc)
            if self.on_damage is not None or not isinstance(error, IndexDamagedError):
                raise error from None
        try:
            self.sync()
        except IndexLockedError:  # another process is the writer: it heals the index
            raise error from None
        try:
            return fn(self.store.reader())
        except _STORE_ERRORS as exc:
            raise self._read_failed(exc) from None

    def _read_failed(self, exc: BaseException) -> BaseException:
        if not isinstance(exc, IndexDamagedError):
            return exc
        reason = str(exc)
        log.warning("index_read_failed", error=reason, rebuild_requested=bool(self.on_damage))
        if self.on_damage is not None:
            self.on_damage(reason)
        return IndexDamagedError(
            f"the index is missing or damaged ({reason}); it is being rebuilt from the "
            "Markdown, try again in a moment")


@overload
def _merged(rebuilt: SyncReport | None, result: SyncReport) -> SyncReport: ...
@overload
def _merged(rebuilt: SyncReport | None, result: T) -> T: ...
def _merged(rebuilt: SyncReport | None, result: object) -> object:
    """What a write returns, with the rebuild that had to come first counted in: a report
    comes back as a report (the rebuild's, with this one merged), anything else unchanged."""
    if rebuilt is None or not isinstance(result, SyncReport):
        return result
    rebuilt.merge(result)
    return rebuilt
