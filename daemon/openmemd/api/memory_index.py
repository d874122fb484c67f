"""The in-process library API: `MemoryIndex` (used by the CLI, the daemon and tests).

One `MemoryIndex` serves one agent's workspace. It is a facade over two collaborators that
share the store and the provider's health: a `Maintainer` (api/maintainer.py), the only writer,
which syncs, fills, heals and keeps up the index, and a `Searcher` (api/searcher.py), which
answers searches on the store's per-thread readers and never waits for a sync. Dreaming is
reached through api/dreams.py.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openmemd import paths
from openmemd.api import dreams
from openmemd.api.maintainer import Maintainer
from openmemd.api.searcher import FOREGROUND_FILL_S, Searched, Searcher
from openmemd.api.status import index_status
from openmemd.config import DEFAULT_AGENT, Settings, load_settings
from openmemd.embed.shared import ProviderHealth, provider_for
from openmemd.errors import BadRequestError, IndexLockedError, WorkspaceError
from openmemd.index import agent_sessions
from openmemd.index import identity as ident
from openmemd.index.lines.cited import parse_citation
from openmemd.index.lines.read import read_lines
from openmemd.index.lines.stored import read_stored
from openmemd.index.scan import ScanScope, classify
from openmemd.index.sync import Progress, SyncReport
from openmemd.index.transcripts import sessions_location
from openmemd.index.vector_fill import Between
from openmemd.protocol.status import IndexStatus
from openmemd.search.results import SearchHit
from openmemd.store import open_store, warm_in_background
from openmemd.store.base import DiskFullError

if TYPE_CHECKING:
    from openmemd.dreaming.explain import CandidateExplanation

# What `MemoryIndex.search` returns: path, start_line, end_line, score, snippet, source,
# citation and (when asked) explain; `api.searcher.reply_hit` turns it into the reply's hit.
SearchResult = SearchHit


class MemoryIndex:
    """Search and maintain the index of one agent's Markdown memory.

    `long_lived`: the daemon. Its store checks the whole index when the writer opens and keeps
    search structures (the vector matrix) in memory; a one-shot command does neither, loading
    everything costs more than the one query it serves.
    """

    def __init__(self, settings: Settings, workspace: Path, agent_id: str, *,
                 long_lived: bool = False) -> None:
        self.workspace = workspace
        self.agent_id = agent_id
        self.db_path = settings.index_path(agent_id)
        self.scope = ScanScope(workspace, tuple(settings.sources), tuple(settings.extra_paths),
                               settings.sync.max_file_bytes, sessions_location(settings,
                                                                               agent_id, workspace),
                               agent_sessions.roots(tuple(settings.sources)))
        self.choice = provider_for(settings)
        self.provider = self.choice.provider
        self.store = open_store(settings, agent_id, long_lived=long_lived, workspace=workspace)
        health = ProviderHealth()
        self._maintainer = Maintainer(settings, self.scope, self.store, self.choice, health)
        self._recalls = dreams.Recalls(workspace,
                                      dreams.agents_scope(workspace, settings.sources))
        self._searcher = Searcher(settings, self.store, self.provider, health,
                                  self._maintainer, self._recalls)
        self._closed = False

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def open(cls, workspace: str | os.PathLike[str] | None = None, *,
             state_dir: str | os.PathLike[str] | None = None, agent_id: str = DEFAULT_AGENT,
             config: Settings | str | os.PathLike[str] | None = None,
             long_lived: bool = False) -> MemoryIndex:
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
        return cls(settings, ws.absolute(), agent_id, long_lived=long_lived)

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what callers set and read ---------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        return self._searcher.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        # A reload swaps the query settings (read per search); what shapes the index itself
        # (sources, chunking, embedding) needs a restart and stays the maintainer's; whether
        # dreaming's reports are embedded follows whether they are searched.
        self._searcher.settings = settings
        self._maintainer.embed_derived = settings.query.dreaming_reports

    @property
    def on_damage(self) -> Callable[[str], None] | None:
        """Set by the daemon: a reader that meets a damaged index asks its writer for a
        rebuild through this and answers `unavailable`, instead of rebuilding itself."""
        return self._searcher.on_damage

    @on_damage.setter
    def on_damage(self, ask: Callable[[str], None] | None) -> None:
        self._searcher.on_damage = ask

    @property
    def model(self) -> str:
        return self._maintainer.model

    @property
    def vectors_failed(self) -> bool:
        """The last vector fill stopped on a provider error (the daemon's writer retries)."""
        return self._maintainer.vectors_failed

    def identity(self, *, probe: bool = True) -> ident.IndexIdentity:
        return self._maintainer.identity(probe=probe)

    def needs_reindex(self) -> list[str]:
        """Identity fields that differ from the stored index ([] when it can be reused)."""
        return self._maintainer.needs_reindex()

    def is_indexed_path(self, rel_path: str) -> bool:
        return classify(self.scope, rel_path) is not None

    # -- writing ---------------------------------------------------------------------------------
    def sync(self, force: bool = False, progress: Progress | None = None, *,
             fill_vectors: bool = True) -> SyncReport:
        """Bring the index up to date with the workspace.

        `force` rebuilds the whole index from the Markdown (in a temporary database swapped in
        when complete, reusing cached embeddings).
        """
        return self._maintainer.sync(force, progress, fill_vectors=fill_vectors)

    def sync_paths(self, rel_paths: Iterable[str], *, fill_vectors: bool = True) -> SyncReport:
        """Re-index exactly these workspace-relative paths (the watcher's entry point)."""
        return self._maintainer.sync_paths(rel_paths, fill_vectors=fill_vectors)

    def fill_vectors(self, should_stop: Callable[[], bool] | None = None,
                     progress: Progress | None = None, *, between: Between | None = None,
                     first: Sequence[str] = ()) -> SyncReport:
        return self._maintainer.fill_vectors(should_stop, progress, between=between,
                                             first=first)

    def catch_up(self, progress: Progress | None = None,
                 fill_progress: Progress | None = None) -> str:
        """For a process with no watcher (a CLI or MCP search without a daemon): bring the
        index up to date with the Markdown before searching it -- a missing one built, a
        damaged one healed -- keyword rows first: what waits for a vector is embedded in the
        background (waited for FOREGROUND_FILL_S, enough for a few edited chunks), so the
        search after it answers at once, by keyword while vectors are pending (its reply
        says so). `progress` hears the keyword pass, `fill_progress` the fill. Returns why
        the index is searched as it is ("" if it is current): another process writes it, or
        there is no space to write (what is stored can still be read, as the daemon serves
        it)."""
        if self._maintainer.filling_in_background:
            return ""  # this process builds it: the next sync takes up what it left
        try:
            self._maintainer.sync_keywords_first(progress, fill_progress=fill_progress,
                                                 wait=FOREGROUND_FILL_S)
        except IndexLockedError:
            return ""  # its writer keeps it current
        except DiskFullError as exc:
            return str(exc)
        return ""

    @property
    def filling_in_background(self) -> bool:
        """Vectors are being embedded in this process's background (see `catch_up`)."""
        return self._maintainer.filling_in_background

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
            self._searcher.ensure_built()
            self.sync_paths([note.path])
            return {**note.to_dict(), "indexed": True}
        except IndexLockedError:
            # another process writes the index (a daemon indexes the note from its watcher)
            why = "another openmemd process writes this index; it indexes the note"
        except Exception as exc:  # the caller shows the reason (the CLI, the MCP reply)
            why = f"{exc}; the next sync or search indexes it"
        return {**note.to_dict(), "indexed": False, "indexError": why}

    def file_replaced(self) -> bool:
        """Whether the index the writer opened was deleted, replaced or found damaged (the
        daemon's periodic check; the next write heals it)."""
        return self._maintainer.file_replaced()

    def prune_cache(self) -> int:
        return self._maintainer.prune_cache()

    def checkpoint(self) -> None:
        """Periodic upkeep of the store (`IndexStore.maintain`)."""
        self._maintainer.checkpoint()

    # -- reading ---------------------------------------------------------------------------------
    def search(self, query: str, max_results: int | None = None, min_score: float | None = None,
               sources: Sequence[str] | None = None, explain: bool = False, *,
               record: bool = True, today: date | None = None) -> list[SearchResult]:
        """The hits (`searched` also says what answered them). `today`: the day "yesterday"
        and "last week" count from (default: the local date in `dreaming.timezone`); pinned by
        tests and replays."""
        return self.searched(query, max_results, min_score, sources, explain, record=record,
                             today=today).hits

    def searched(self, query: str, max_results: int | None = None,
                 min_score: float | None = None, sources: Sequence[str] | None = None,
                 explain: bool = False, *, record: bool = True,
                 today: date | None = None, project: str | None = None) -> Searched:
        """A search's hits and what its reply says of them (`Searched`). `project`: only
        other agents' sessions that ran in this folder (or one inside it)."""
        return self._searcher.search(query, max_results, min_score, sources, explain,
                                     record=record, today=today, project=project)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None, *,
            namespace: str | None = None) -> dict[str, Any]:
        """Lines of a file of this workspace or, with `namespace`, of a hit from another
        searched namespace (read from the stored index: that file is not here)."""
        if namespace is None or namespace == self.store.namespace:
            return read_lines(self.scope, path, from_line, lines)
        if self.store.backend != "postgres":
            raise BadRequestError("a namespace applies to a PostgreSQL store; this index is "
                                  f"{self.store.backend}")
        if namespace not in self.settings.store.search_namespaces_for(self.agent_id):
            raise BadRequestError(f"namespace {namespace[:200]!r} is not one agent "
                                  f"{self.agent_id} searches (store.search_namespaces)")
        cited = parse_citation(path, from_line, lines)
        chunks = self._searcher.read(lambda reader: reader.file_chunks(cited.path, namespace))
        return read_stored(cited.path, namespace, chunks, cited.from_line, cited.lines)

    def context(self, today: str | date | None = None) -> dict[str, Any]:
        """The session's startup context of this workspace (`openmemd.context`): MEMORY.md,
        USER.md and today's and yesterday's notes within their budgets, wrapped as data."""
        from openmemd.context import startup_context

        return startup_context(self.workspace, self.settings, today).to_dict()

    def warm(self) -> None:
        """Load the model, run one query embedding and read the word ranks evidence weighs
        terms by, so the first real search is fast."""
        self._searcher.warm()

    def warm_store(self) -> None:
        """Load what a long-lived store keeps in memory (SQLite's vector matrix) in a
        background thread, so the first search does not pay for it (the daemon, once it
        serves); nothing for a one-shot index."""
        warm_in_background([self.db_path])

    def status(self) -> IndexStatus:
        """What `status` reports about this index, as a record (`to_json()` gives the JSON
        the daemon sends)."""
        return index_status(self._maintainer, self._searcher, agent_id=self.agent_id,
                            db_path=self.db_path)

    # -- dreaming --------------------------------------------------------------------------------
    def flush_recalls(self, timeout: float = 5.0) -> None:
        self._recalls.flush(timeout)

    def dream(self, phase: str = "all", dry_run: bool = False) -> dict[str, Any]:
        # Every search answered before the sweep is in the store it reads: a dry run and the
        # run after it see the same recalls (the recorder writes on its own thread).
        self.flush_recalls()
        return dreams.dream(self.workspace, self.settings.dreaming, phase, dry_run,
                            self.settings.context.bootstrap_max_chars,
                            sources=self.settings.sources)

    def explain_dream(self, selector: str) -> list[CandidateExplanation]:
        return dreams.explain_dream(self.workspace, selector, self.settings.dreaming)

    # -- shutdown --------------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._recalls.close()
        self._maintainer.close()
