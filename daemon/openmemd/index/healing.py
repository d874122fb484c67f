"""The self-healing half of `MemoryIndex`: opening the writer, replacing a damaged index while
running, and degrading to keyword search while the embedding provider is down.

Kept apart from `openmemd.api` so that module stays about the library's API. Everything here
runs under the index's write lock except `_read_failed` and `_query_vector` (reader threads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openmemd.embed.base import EmbeddingError
from openmemd.errors import IndexLockedError
from openmemd.index.scan import ScanIssue
from openmemd.index.sync import IndexSync, Progress, SyncReport
from openmemd.log import get_logger
from openmemd.store.sqlite import db, health, recovery, schema

log = get_logger(__name__)


class SelfHealing:
    """Mixin for MemoryIndex (which provides the attributes used here)."""

    db_path: Any
    provider: Any
    provider_health: Any
    recovery: recovery.Recovery | None
    rebuilding: bool
    vectors_failed: bool
    on_damage: Callable[[str], None] | None
    _write_lock: Any
    _writer: Any
    _writer_id: Any
    _vec: Any
    _files_mirror: dict[str, Any]
    _generation: int
    _damage_seen: str
    _local: Any
    _query_vectors: Any

    def _acquire_lock_file(self) -> None: ...
    def _reader(self) -> tuple[Any, Any]: ...
    def sync(self, force: bool = False, progress: Any = None, *,
             fill_vectors: bool = True) -> Any: ...
    def _indexer(self, conn: Any, vec: Any) -> IndexSync: ...
    def identity(self, *, probe: bool = True) -> Any: ...

    def _open_writer(self) -> db.Connection:
        if self._writer is None:
            self._acquire_lock_file()
            # The daemon (it has a rebuild hook) reads every page once at open; a one-shot
            # command checks the schema and heals on the first damage error instead.
            self._adopt(recovery.open_writer(self.db_path, thorough=self.on_damage is not None))
        return self._writer

    def _adopt(self, opened: recovery.Opened) -> None:
        self._writer, self._vec, self._writer_id = opened.conn, opened.vec, opened.identity
        self._files_mirror = {}  # a new connection (or file) starts from the table itself
        if opened.recovery is not None:
            self.recovery, self.rebuilding = opened.recovery, True
            self._generation += 1
        if not opened.vec.available:
            log.warning("sqlite-vec unavailable; vectors are searched in process",
                        reason=opened.vec.reason)

    def _guarded(self, fn: Callable[[], Any], progress: Progress | None = None) -> Any:
        """Run a write. Damage found before or during it replaces the file and refills it
        from the Markdown first; a full disk becomes DiskFullError (the daemon retries)."""
        with self._write_lock:
            try:
                self._open_writer()
                reason = health.replaced_reason(self.db_path, self._writer_id)
                if not reason and self._damage_seen:
                    reason, self._damage_seen = recovery.confirm_damage(self.db_path), ""
                if reason:
                    self._replace(reason)
                rebuilt = self._rebuild(progress) if self.rebuilding else None
                return _merged(rebuilt, fn())
            except (*db.DatabaseError, OSError) as exc:
                if health.is_disk_full(exc, self.db_path):
                    raise health.disk_full(self.db_path, exc) from None
                if not health.is_damage(exc):
                    raise
                self._replace(str(exc))
                return _merged(self._rebuild(progress), fn())

    def file_replaced(self) -> bool:
        """Whether the file the writer opened was deleted or replaced (a stat, no lock)."""
        return self._writer is not None and bool(
            health.replaced_reason(self.db_path, self._writer_id))

    def _replace(self, reason: str) -> None:
        old, self._writer = self._writer, None
        self._adopt(recovery.replace_damaged(self.db_path, reason, old))

    def _rebuild(self, progress: Progress | None) -> SyncReport:
        """Keyword rows of every file into the fresh index (salvaged vectors come along)."""
        assert self._writer is not None
        schema.write_meta(self._writer, self.identity().to_meta())
        report = self._indexer(self._writer, self._vec).sync(progress=progress)
        report.reindexed = True
        self.rebuilding = False
        log.info("index_rebuilt_after_damage", path=str(self.db_path),
                 files=report.indexed, vectors_from_cache=report.vectors_from_cache)
        return report

    def _fill(self, indexer: IndexSync, progress: Progress | None = None,
              should_stop: Any = None) -> SyncReport:
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

    def _query_vector(self, query: str) -> tuple[Any, str]:
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

    def search_meta(self) -> dict[str, str]:
        """What a search reply says besides its results, the same on every way in (CLI,
        socket, MCP): provider, model, mode (and why it degraded) and the citations mode."""
        return {"provider": self.provider.id if self.provider is not None else "none",
                "model": self.model, **self.search_mode(),
                "citations": self.settings.citations}

    def _read(self, fn: Callable[[Any, Any], Any]) -> Any:
        """Run `fn(conn, vec)` on this thread's reader. On a damaged index a one-shot caller
        rebuilds it now and retries once; the daemon's readers answer `unavailable` and leave
        the rebuild to its writer (see `on_damage`)."""
        try:
            conn, vec = self._reader()
            return fn(conn, vec)
        except db.DatabaseError as exc:
            error = self._read_failed(exc)
            if self.on_damage is not None or not isinstance(error, health.IndexDamagedError):
                raise error from None
        try:
            self.sync()
        except IndexLockedError:  # another process is the writer: it heals the index
            raise error from None
        try:
            conn, vec = self._reader()
            return fn(conn, vec)
        except db.DatabaseError as exc:
            raise self._read_failed(exc) from None

    def _read_failed(self, exc: BaseException) -> BaseException:
        if health.is_disk_full(exc, self.db_path):
            return health.disk_full(self.db_path, exc)
        if not health.is_damage(exc):
            return exc
        reason = str(exc)
        log.warning("index_read_failed", error=reason, rebuild_requested=bool(self.on_damage))
        self._damage_seen = reason
        self._generation += 1  # readers reopen: the file may be replaced by then
        if self.on_damage is not None:
            self.on_damage(reason)
        return health.IndexDamagedError(
            f"the index is missing or damaged ({reason}); it is being rebuilt from the "
            "Markdown, try again in a moment")


def _merged(rebuilt: SyncReport | None, result: Any) -> Any:
    """What a write returns, with the rebuild that had to come first counted in."""
    if rebuilt is None or not isinstance(result, SyncReport):
        return result
    rebuilt.merge(result)
    return rebuilt
