"""The writing side of `MemoryIndex`: runs each write of an index, one at a time, and heals it.

Writes (sync, a vector fill, upkeep) are serialised by a lock inside the process and by the
store's writer lock across processes, so there is only ever one writer. In the daemon they
come from the indexer thread (server/indexer.py); a command run without a daemon calls them
in-process. What a sync writes is `index.sync.IndexSync`'s to decide. Every write runs
`_guarded`: damage the store found before or during it (`IndexStore.damage`) replaces the index
(`IndexStore.heal`) and refills its keyword rows from the Markdown first.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

from openmemd.config import Settings
from openmemd.embed.base import EmbeddingError, ProviderDown
from openmemd.embed.shared import ProviderHealth, batch_size, pool_for
from openmemd.errors import OpenmemdError
from openmemd.index import identity as ident
from openmemd.index.scan import ScanIssue, ScanScope
from openmemd.index.sync import FTS_ONLY_MODEL, IndexSync, Progress, SyncReport, VectorTarget
from openmemd.index.vector_fill import Between
from openmemd.log import get_logger
from openmemd.store.base import IndexDamagedError, IndexStore, Recovery, StoreWriter

if TYPE_CHECKING:
    from openmemd.embed.registry import ProviderChoice

log = get_logger(__name__)

T = TypeVar("T")


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


@dataclass(frozen=True)
class BuildProgress:
    """How far an index built in the background is: what a keyword-only search says."""

    files: int = 0  # files with keyword rows
    vectors: tuple[int, int] = (0, 0)  # embedded, to embed
    healing: bool = False  # a damaged index refilled (not a first build)

    def note(self) -> str:
        done, total = self.vectors
        what = ("the index was damaged; its vectors are being embedded again" if self.healing
                else "the index is being built")
        return f"{what}: {self.files} files indexed, vectors {done}/{total}"


class Maintainer:
    """Syncs, fills, heals and keeps up one agent's index. `settings` are the ones the index
    was opened with: what shapes an index (sources, chunking, embedding) needs a restart."""

    def __init__(self, settings: Settings, scope: ScanScope, store: IndexStore,
                 choice: ProviderChoice, health: ProviderHealth) -> None:
        self.settings = settings
        self.scope = scope
        self.store = store
        self.choice = choice
        self.provider = choice.provider
        self.health = health  # shared with the searcher: a failed fill means keyword search
        self._lock = threading.RLock()
        self.last_sync_at: float | None = None
        self.last_sync_error = ""
        self.last_report: SyncReport | None = None
        self.recovery: Healed | None = None
        self.rebuilding = False  # a replaced (damaged) index is being refilled
        self._damage_found = ""  # see file_replaced
        self.vectors_failed = False  # the last vector fill stopped on a provider error
        # Derived files (dreaming's reports) are embedded only while search includes them
        # (`query.dreaming_reports`; swapped on a reload, see MemoryIndex.settings): a vector
        # nothing searches is CPU spent for nothing. Keyword rows are written either way.
        self.embed_derived = settings.query.dreaming_reports
        self._background: threading.Thread | None = None  # see sync_keywords_first
        self.build = BuildProgress()  # what the background fill has done
        self._stop_background = threading.Event()

    # -- identity --------------------------------------------------------------------------------
    @property
    def model(self) -> str:
        return self.provider.model if self.provider is not None else FTS_ONLY_MODEL

    def dims(self, *, probe: bool) -> int | None:
        """The provider's vector size; a remote provider learns it from its first reply, so
        status (probe=False) must not send a request just to report it."""
        p = self.provider
        if p is None:
            return None
        if not probe:
            return p.known_dims
        try:
            return p.dims
        except EmbeddingError as exc:  # unknown dims never mean a rebuild (see differences)
            self.health.failed(exc)
            return None

    def identity(self, *, probe: bool = True) -> ident.IndexIdentity:
        fts_only = ident.IndexIdentity.fts_only(
            sources=tuple(self.settings.sources), extra_paths=tuple(self.scope.extra_roots()),
            chunk_tokens=self.settings.chunking.tokens,
            chunk_overlap=self.settings.chunking.overlap,
            fts_tokenizer=self.store.fts_tokenizer)
        p = self.provider
        if p is None:
            return fts_only
        return dataclasses.replace(fts_only, provider=p.id, model=p.model,
                                   provider_key=p.provider_key, dims=self.dims(probe=probe))

    def needs_reindex(self) -> list[str]:
        """Identity fields that differ from the stored index ([] when it can be reused)."""
        with self._lock:
            writer = self.store.writer()
            stored = writer.read_meta()
            if stored is None and not writer.load_signatures():
                return []  # a fresh index is simply built in place
            return ident.differences(stored, self.identity().to_meta())

    # -- writes ----------------------------------------------------------------------------------
    def sync(self, force: bool = False, progress: Progress | None = None, *,
             fill_vectors: bool = True) -> SyncReport:
        started = time.monotonic()
        with self._lock:
            try:
                report = self._guarded(lambda: self._sync(force, progress, fill_vectors),
                                       progress)
            except OpenmemdError:
                raise
            except Exception as exc:
                self.last_sync_error = f"{type(exc).__name__}: {exc}"
                raise
            report.seconds = time.monotonic() - started
            self.last_sync_at = time.time()
            self.last_sync_error = ""
            self.last_report = report
            return report

    def _sync(self, force: bool, progress: Progress | None, fill_vectors: bool) -> SyncReport:
        writer = self.store.writer()
        diffs = self.needs_reindex()
        if force or diffs:
            if diffs:
                log.info("index identity changed; rebuilding", changed=diffs)
            return self._safe_reindex(progress, fill_vectors)
        if writer.read_meta() is None:
            with writer.transaction():
                writer.write_meta(self.identity().to_meta())
        indexer = self._indexer(writer)
        report = indexer.sync(progress=progress)
        if fill_vectors:
            report.merge(self._fill(indexer, progress))
        else:
            report.vectors_pending = indexer.vector_fill.pending()
        return report

    def sync_paths(self, rel_paths: Iterable[str], *, fill_vectors: bool = True) -> SyncReport:
        with self._lock:
            if self._guarded(self.needs_reindex):
                return self.sync()
            report = self._guarded(lambda: self._indexer(self.store.writer())
                                   .sync_paths(rel_paths))
            if fill_vectors:
                report.merge(self.fill_vectors())
            self.last_sync_at = time.time()
            return report

    def fill_vectors(self, should_stop: Callable[[], bool] | None = None,
                     progress: Progress | None = None, *, between: Between | None = None,
                     first: Sequence[str] = ()) -> SyncReport:
        """Embed what waits for a vector, `first` files' chunks first; `between` commits
        edits while a batch embeds (index/vector_fill.py)."""
        return self._guarded(lambda: self._fill(self._indexer(self.store.writer()),
                                                progress, should_stop, between, first))

    def sync_keywords_first(self, progress: Progress | None = None, *, wait: float = 0.0,
                            fill_progress: Progress | None = None) -> None:
        """Bring the keyword rows up to date now (healing a damaged index on the way) and
        embed what waits for a vector in a background thread, waited for at most `wait`
        seconds: for a one-shot search or an MCP session without a daemon (a first index, a
        damaged one, edits since), which then answers by keyword while vectors are pending
        instead of waiting for every one of them. `progress` hears the keyword pass,
        `fill_progress` the fill (from its thread). `close()` stops the fill; the next sync
        embeds the rest."""
        report = self.sync(fill_vectors=False, progress=progress)
        if self.provider is None or self.filling_in_background or not report.vectors_pending:
            return
        self._stop_background.clear()
        self.build = BuildProgress(files=report.scanned - len(report.skipped),
                                   vectors=(0, report.vectors_pending),
                                   healing=report.reindexed and self.recovery is not None)
        self._background = threading.Thread(target=self._fill_in_background, args=(fill_progress,),
                                            daemon=True, name="openmemd-vector-fill")
        self._background.start()
        self._background.join(wait)

    @property
    def filling_in_background(self) -> bool:
        return self._background is not None and self._background.is_alive()

    def _fill_in_background(self, progress: Progress | None) -> None:
        def seen(phase: str, done: int, total: int) -> None:
            self.build = dataclasses.replace(self.build, vectors=(done, total))
            if progress is not None:
                progress(phase, done, total)

        try:
            self.fill_vectors(should_stop=self._stop_background.is_set, progress=seen)
        except Exception as exc:  # no caller to raise to: the next sync fills what is left
            log.warning("background_vector_fill_failed", error=f"{type(exc).__name__}: {exc}")

    def prune_cache(self) -> int:
        if not self.settings.cache.max_entries:
            return 0

        def prune() -> int:
            writer = self.store.writer()
            with writer.transaction():
                return writer.cache_prune(self.settings.cache.max_entries)

        return self._guarded(prune)

    def checkpoint(self) -> None:
        self._guarded(self.store.maintain)

    def close(self) -> None:
        """Stop a background fill (what it embedded is kept) and close the store."""
        self._stop_background.set()
        if self._background is not None:
            self._background.join()
        with self._lock:
            self.store.close()

    # -- how a write is done ---------------------------------------------------------------------
    def _indexer(self, writer: StoreWriter) -> IndexSync:
        vectors = None
        if self.provider is not None:
            vectors = VectorTarget(self.provider, pool_for(self.settings, self.provider),
                                   self.settings.cache.enabled,
                                   batch_size(self.settings, self.provider))
        return IndexSync(writer, self.scope, chunk_tokens=self.settings.chunking.tokens,
                         chunk_overlap=self.settings.chunking.overlap, vectors=vectors,
                         embed_derived=self.embed_derived)

    def _fill(self, indexer: IndexSync, progress: Progress | None = None,
              should_stop: Callable[[], bool] | None = None, between: Between | None = None,
              first: Sequence[str] = ()) -> SyncReport:
        """Embed pending chunks; a provider that does not answer leaves them pending (keyword
        search meanwhile) with a warning, never fails the sync."""
        try:
            report = indexer.vector_fill.fill(progress=progress, should_stop=should_stop,
                                              between=between, first=first)
        except EmbeddingError as exc:
            message = self.health.failed(exc)
            self.vectors_failed = True
            report = SyncReport(vectors_pending=indexer.vector_fill.pending())
            report.warnings.append(ScanIssue("(embeddings)", f"{message}; "
                                   f"{report.vectors_pending} chunk(s) wait for vectors"))
            return report
        self.vectors_failed = False
        if report.vectors_embedded:
            self.health.recovered()
        return report

    def _safe_reindex(self, progress: Progress | None, fill_vectors: bool) -> SyncReport:
        try:  # readers keep the old index until the new one is complete
            return self.store.rebuild(lambda writer: self._build(writer, progress,
                                                                 fill_vectors))
        except EmbeddingError as exc:  # a rebuild needs every vector: keep the old index
            raise ProviderDown(f"{exc}; the index was not rebuilt (the previous one keeps "
                               "serving)") from exc

    def _build(self, writer: StoreWriter, progress: Progress | None,
               fill_vectors: bool) -> SyncReport:
        """A full rebuild's build step: the fresh index the store hands over (it swaps it in
        when complete and has already carried the embedding cache over), filled from the
        Markdown, reusing every cached embedding."""
        with writer.transaction():
            writer.write_meta(self.identity().to_meta())
        indexer = self._indexer(writer)
        report = indexer.sync(force=True, progress=progress)
        report.merge(indexer.vector_fill.fill(progress=progress) if fill_vectors
                     else SyncReport(vectors_pending=indexer.vector_fill.pending()))
        if self.settings.cache.enabled and self.settings.cache.max_entries:
            with writer.transaction():
                writer.cache_prune(self.settings.cache.max_entries)
        report.reindexed = True
        return report

    # -- healing ---------------------------------------------------------------------------------
    def _guarded(self, fn: Callable[[], T], progress: Progress | None = None) -> T:
        """Run a write. Damage found before or during it replaces the index and refills it
        from the Markdown first; a full disk (DiskFullError) is the caller's to retry."""
        with self._lock:
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

    def damaged(self) -> bool:
        """Whether the writer finds the index damaged, on opening it or since (then the next
        write heals it)."""
        with self._lock:
            try:
                self.store.writer()
            except IndexDamagedError:
                return True
            return self.file_replaced() or bool(self._damage_found)

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
