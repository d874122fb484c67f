"""The in-process library API: `MemoryIndex` (used by the CLI, the daemon and tests).

One `MemoryIndex` serves one agent's workspace. Writes (sync) are serialised by a lock inside
the process and by the store's writer lock across processes, so there is only ever one writer;
searches run on the store's per-thread readers and never wait for a sync.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openmemd import paths
from openmemd.api import long_lived
from openmemd.api.dreams import DreamingAccess
from openmemd.api.rebuild import build_index
from openmemd.api.status import index_status
from openmemd.config import DEFAULT_AGENT, SOURCES, Settings, load_settings
from openmemd.embed.base import EmbeddingError, ProviderDown
from openmemd.embed.shared import ProviderHealth, QueryVectors, batch_size, pool_for, provider_for
from openmemd.errors import (
    BadRequestError,
    IndexLockedError,
    OpenmemdError,
    UnavailableError,
    WorkspaceError,
)
from openmemd.index import identity as ident
from openmemd.index.healing import Healed, SelfHealing
from openmemd.index.read import read_lines
from openmemd.index.scan import ScanScope, classify
from openmemd.index.sync import FTS_ONLY_MODEL, IndexSync, Progress, SyncReport, VectorTarget
from openmemd.index.transcripts import sessions_location
from openmemd.log import get_logger
from openmemd.search import citations
from openmemd.search.results import SearchHit
from openmemd.store import open_store
from openmemd.store.base import DiskFullError, StoreWriter

if TYPE_CHECKING:
    from openmemd.dreaming.recall import RecallRecorder

log = get_logger(__name__)

MAX_QUERY_CHARS = 4096


# What `MemoryIndex.search` returns: path, start_line, end_line, score, snippet, source,
# citation and (when asked) explain; `.to_dict()` gives OpenClaw's camelCase JSON shape.
SearchResult = SearchHit


class MemoryIndex(SelfHealing, DreamingAccess):
    """Search and maintain the index of one agent's Markdown memory."""

    def __init__(self, settings: Settings, workspace: Path, agent_id: str) -> None:
        self.settings = settings
        self.workspace = workspace
        self.agent_id = agent_id
        self.db_path = settings.index_path(agent_id)
        self.scope = ScanScope(workspace, tuple(settings.sources), tuple(settings.extra_paths),
                               settings.sync.max_file_bytes, sessions_location(settings,
                                                                               agent_id, workspace))
        self.choice = provider_for(settings)
        self.provider = self.choice.provider
        self._write_lock = threading.RLock()
        # The daemon (long-lived) checks the whole index when it opens the writer and keeps
        # search structures in memory; a one-shot command does neither.
        self.store = open_store(settings, agent_id, long_lived=long_lived.active(),
                                workspace=workspace)
        self._local = threading.local()
        self._query_vectors = QueryVectors(settings.embedding.query_cache_size)
        self._recorder: RecallRecorder | None = None
        self.last_sync_at: float | None = None
        self.last_sync_error: str = ""
        self.last_report: SyncReport | None = None
        self._closed = False
        self._built = False  # see _ensure_built
        self.recovery: Healed | None = None
        self.rebuilding = False  # a replaced (damaged) index is being refilled
        self._damage_found = ""  # see SelfHealing.file_replaced
        self.on_damage: Callable[[str], None] | None = None  # the daemon asks for a rebuild
        self.provider_health = ProviderHealth()
        self.vectors_failed = False  # the last vector fill stopped on a provider error

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def open(cls, workspace: str | os.PathLike[str] | None = None, *,
             state_dir: str | os.PathLike[str] | None = None, agent_id: str = DEFAULT_AGENT,
             config: Settings | str | os.PathLike[str] | None = None) -> MemoryIndex:
        settings = (config if isinstance(config, Settings) else load_settings(config)
                    ).for_agent(agent_id)
        if state_dir is not None:
            settings = dataclasses.replace(settings, state_dir=str(state_dir))
        if workspace is None:
            ws = settings.workspace_for(agent_id)
            if ws == paths.default_workspace() and not ws.exists():
                ws.mkdir(parents=True, exist_ok=True)
                (ws / "memory").mkdir(exist_ok=True)
        else:
            ws = Path(workspace).expanduser()
        if not ws.is_dir():
            raise WorkspaceError(f"workspace {ws} does not exist or is not a directory")
        return cls(settings, ws.absolute(), agent_id)

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- identity --------------------------------------------------------------------------------
    def _dims(self, *, probe: bool) -> int | None:
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
            self.provider_health.failed(exc)
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
                                   provider_key=p.provider_key, dims=self._dims(probe=probe))

    @property
    def model(self) -> str:
        return self.provider.model if self.provider is not None else FTS_ONLY_MODEL

    # -- the writer ------------------------------------------------------------------------------
    def _indexer(self, writer: StoreWriter) -> IndexSync:
        vectors = None
        if self.provider is not None:
            vectors = VectorTarget(self.provider, pool_for(self.settings, self.provider),
                                   self.settings.cache.enabled,
                                   batch_size(self.settings, self.provider))
        return IndexSync(writer, self.scope, chunk_tokens=self.settings.chunking.tokens,
                         chunk_overlap=self.settings.chunking.overlap, vectors=vectors)

    def needs_reindex(self) -> list[str]:
        """Identity fields that differ from the stored index ([] when it can be reused)."""
        with self._write_lock:
            writer = self.store.writer()
            stored = writer.read_meta()
            if stored is None and not writer.load_signatures():
                return []  # a fresh index is simply built in place
            return ident.differences(stored, self.identity().to_meta())

    def sync(self, force: bool = False, progress: Progress | None = None, *,
             fill_vectors: bool = True) -> SyncReport:
        """Bring the index up to date with the workspace.

        `force` rebuilds the whole index from the Markdown (in a temporary database swapped in
        when complete, reusing cached embeddings).
        """
        started = time.monotonic()
        with self._write_lock:
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
            report.vectors_pending = indexer.pending_vectors()
        return report

    def sync_paths(self, rel_paths: Iterable[str], *, fill_vectors: bool = True) -> SyncReport:
        """Re-index exactly these workspace-relative paths (the watcher's entry point)."""
        with self._write_lock:
            if self._guarded(self.needs_reindex):
                return self.sync()
            report = self._guarded(lambda: self._indexer(self.store.writer())
                                   .sync_paths(rel_paths))
            if fill_vectors:
                report.merge(self.fill_vectors())
            self.last_sync_at = time.time()
            return report

    def fill_vectors(self, should_stop: Callable[[], bool] | None = None,
                     progress: Progress | None = None) -> SyncReport:
        return self._guarded(lambda: self._fill(self._indexer(self.store.writer()),
                                                progress, should_stop))

    def _safe_reindex(self, progress: Progress | None, fill_vectors: bool = True) -> SyncReport:
        try:  # readers keep the old index until the new one is complete
            return self.store.rebuild(lambda writer: build_index(self, writer, progress,
                                                                 fill_vectors))
        except EmbeddingError as exc:  # a rebuild needs every vector: keep the old index
            raise ProviderDown(f"{exc}; the index was not rebuilt (the previous one keeps "
                               "serving)") from exc

    # -- reading ---------------------------------------------------------------------------------
    def catch_up(self) -> str:
        """For a process with no watcher (a CLI or MCP search without a daemon): bring an
        existing index up to date with the Markdown before searching it. A missing one is left
        to the search, which builds it (`_ensure_built`). Asks the store, not the SQLite path:
        on PostgreSQL that file never exists, and searches there missed every edit since the
        last `openmemd index`. Returns why the index is searched as it is ("" if it is
        current): another process writes it, or there is no space to write (what is stored
        can still be read, as the daemon serves it)."""
        try:
            if self.store.exists():
                self.sync()
        except IndexLockedError:
            return ""  # its writer keeps it current
        except DiskFullError as exc:
            return str(exc)
        return ""

    def _ensure_built(self) -> None:
        """First search on a never-indexed workspace: build it now (OpenClaw's bootstrap)."""
        if self._built:  # an index, once built, stays built: no check on every search
            return
        if self.store.exists():
            try:  # the file may go between the check and the open (a rebuild moves it)
                if self.store.reader().read_meta() is not None:
                    self._built = True
                    return
            except UnavailableError:
                pass
        try:
            self.sync()
        except IndexLockedError:
            pass  # another process is building it; search what exists

    def search(self, query: str, max_results: int | None = None, min_score: float | None = None,
               sources: Sequence[str] | None = None, explain: bool = False, *,
               record: bool = True) -> list[SearchResult]:
        if not isinstance(query, str):
            raise BadRequestError("query must be a string")
        query = query.strip()
        if len(query) > MAX_QUERY_CHARS:
            raise BadRequestError(f"query is longer than {MAX_QUERY_CHARS} characters")
        if sources is not None:
            bad = [s for s in sources if s not in SOURCES]
            if bad:
                raise BadRequestError(f"unknown source(s) {bad}; use {', '.join(SOURCES)}")
        self._local.nearest = None
        if not query:
            return []
        q = self.settings.query
        max_results = q.max_results if max_results is None else max_results
        min_score = q.min_score if min_score is None else min_score
        self._ensure_built()
        from openmemd.search.pipeline import search_outcome

        vector, self._local.degraded = self._query_vector(query)
        found = self._read(lambda reader: search_outcome(
            reader, query, query_vector=vector, model=self.model, settings=q,
            max_results=max_results, min_score=min_score, sources=sources, now=time.time(),
            explain=explain))
        hits = found.hits
        self._local.nearest = found.nearest  # for search_meta: what a lower min_score shows
        own = [h for h in hits if h.namespace in ("", self.store.namespace)]
        if record and own:  # dreaming promotes only this workspace's own notes
            self._record(query, own)
        return citations.apply(hits, self.settings.citations)  # after recording: raw snippets

    def get(self, path: str, from_line: int | None = None, lines: int | None = None
            ) -> dict[str, Any]:
        return read_lines(self.scope, path, from_line, lines)

    def add(self, text: str, target: str = "daily", *, sync: bool = True) -> dict[str, Any]:
        """Append a note (see `openmemd.notes`) and, with `sync`, index that file at once so a
        search right after finds it (the daemon leaves that to its writer thread)."""
        from openmemd.notes import append_note

        note = append_note(self.workspace, text, target, tz_name=self.settings.dreaming.timezone)
        if not sync:
            return note.to_dict()
        # From here on the note is written: an error would make the caller (an agent) retry
        # and write it twice. So, like the daemon's add, it says whether the note is indexed.
        try:
            self._ensure_built()
            self.sync_paths([note.path])
            return {**note.to_dict(), "indexed": True}
        except IndexLockedError:
            # another process writes the index (a daemon indexes the note from its watcher)
            why = "another openmemd process writes this index; it indexes the note"
        except Exception as exc:  # the caller shows the reason (the CLI, the MCP reply)
            why = f"{exc}; the next sync or search indexes it"
        return {**note.to_dict(), "indexed": False, "indexError": why}

    def is_indexed_path(self, rel_path: str) -> bool:
        return classify(self.scope, rel_path) is not None

    # -- maintenance -----------------------------------------------------------------------------
    def prune_cache(self) -> int:
        if not self.settings.cache.max_entries:
            return 0

        def prune() -> int:
            writer = self.store.writer()
            with writer.transaction():
                return writer.cache_prune(self.settings.cache.max_entries)

        return self._guarded(prune)

    def checkpoint(self) -> None:
        """Periodic upkeep of the store (`IndexStore.maintain`)."""
        self._guarded(self.store.maintain)

    def warm(self) -> None:
        """Load the model and run one query embedding, so the first real search is fast."""
        if self.provider is not None:
            try:
                self._query_vectors.get(self.provider, "openmemd warm-up")
            except EmbeddingError as exc:
                self.provider_health.failed(exc)

    # -- status ----------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        return index_status(self)

    # -- shutdown --------------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._recorder is not None:
            try:
                self._recorder.close()
            except Exception as exc:  # never lose the close of the databases to this
                log.warning("recall recorder did not close cleanly", error=str(exc))
        with self._write_lock:
            self.store.close()
