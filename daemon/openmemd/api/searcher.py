"""The reading side of `MemoryIndex`: a search from the query to its cited results.

Searches run on the store's per-thread readers and never wait for a sync. Around the pipeline
(`openmemd.search.pipeline`) this holds what a search needs besides the index: the query's
embedding (cached; skipped while the provider is down, so the search runs keyword-only), the
read that meets a damaged index, the recall recording dreaming ranks by, and the citations.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Sequence
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import numpy as np
from numpy.typing import NDArray

from openmemd.api.dreams import Recalls
from openmemd.api.maintainer import Maintainer
from openmemd.config import SOURCES, Settings
from openmemd.dreaming.clock import day_bucket, resolve_timezone
from openmemd.embed.base import EmbeddingError, EmbeddingProvider
from openmemd.embed.shared import ProviderHealth, QueryVectors
from openmemd.errors import BadRequestError, IndexLockedError, UnavailableError
from openmemd.index.agent_sessions import SessionProjects
from openmemd.index.line_days import LineDays
from openmemd.log import get_logger
from openmemd.protocol import params
from openmemd.protocol.records import replace
from openmemd.protocol.replies import (
    DatesSaid,
    Explain,
    Hit,
    Lines,
    Nearest,
    NearestNotes,
    SearchReply,
)
from openmemd.search import citations
from openmemd.search.commonness import specificity
from openmemd.search.results import NearestMiss, SearchHit, SearchOutcome
from openmemd.store.base import (
    CandidateFilter,
    DiskFullError,
    IndexDamagedError,
    IndexStore,
    StoreReader,
    StoreUnavailableError,
)

if TYPE_CHECKING:
    from openmemd.search.dates.query import DateQuery

log = get_logger(__name__)

T = TypeVar("T")

# A search with no daemon waits at most this long for the vectors a catch-up left to embed
# (a few edited chunks make it in time); then it answers by keyword while they fill.
FOREGROUND_FILL_S = 1.0
# What a read can raise about the index itself (the store's errors, see store.base).
_STORE_ERRORS = (IndexDamagedError, DiskFullError, StoreUnavailableError)


PROJECT_OVERSAMPLE = 5  # candidates asked for per hit wanted when a project narrows a search


class Searched(NamedTuple):
    """What one search found, its hits and what its reply says of them: what answered
    (provider, model, mode and why it was keyword only), the citations mode, the dates the
    query was understood to name and, when nothing passed, the nearest miss and the chunks
    still waiting for a vector (searched by keyword only)."""

    hits: list[SearchHit]
    provider: str
    model: str
    mode: str
    degraded: str = ""
    citations: str = "auto"
    dates: DatesSaid | None = None
    nearest: Nearest | None = None
    pending_vectors: int = 0

    def reply(self, took_ms: float) -> SearchReply:
        """The reply to a search request, the same on every way in (CLI, socket, MCP)."""
        return SearchReply(results=tuple(reply_hit(h) for h in self.hits),
                           provider=self.provider, model=self.model, mode=self.mode,
                           degraded=self.degraded, citations=self.citations, dates=self.dates,
                           nearest=self.nearest, pending_vectors=self.pending_vectors,
                           took_ms=took_ms)


def reply_hit(hit: SearchHit) -> Hit:
    """A hit as a reply carries it (OpenClaw's memory_search result: no chunk id)."""
    return Hit(path=hit.path, start_line=hit.start_line, end_line=hit.end_line,
               score=round(hit.score, 6), snippet=hit.snippet, source=hit.source,
               focus=Lines(hit.focus_start, hit.focus_end) if hit.focus_start else None,
               citation=hit.citation, namespace=hit.namespace,
               explain=None if hit.explain is None else Explain.from_json(hit.explain))


def reply_nearest(miss: NearestMiss) -> Nearest:
    return Nearest(round(miss.score, 6), miss.path, miss.start_line, miss.end_line,
                   miss.citation)


class Understood(NamedTuple):
    """The dates a query names (`dates`, as the reply says them) and those searched (None:
    searched as if it named none), the dated notes nearest dates that hold none (`around`;
    `nearby`: those within a week were searched as the dates' notes) and the words that must
    show an answer when fewer than those searched (`asked`)."""

    dates: DateQuery | None = None
    searched: DateQuery | None = None
    around: tuple[str | None, str | None] | None = None
    asked: str | None = None
    nearby: bool = False


def said_dates(dates: DateQuery | None, around: tuple[str | None, str | None] | None, *,
               nearby: bool) -> DatesSaid | None:
    """The reply's `dates`: what was understood and, for dates that hold no note, the dated
    notes nearest them."""
    if dates is None:
        return None
    said = DatesSaid.from_json(dates.to_meta())
    if around is None:
        return said
    return replace(said, nearest_notes=NearestNotes(around[0], around[1],
                                                    searched_first=nearby))


class Searcher:
    """Searches one agent's index. `settings` is swapped on a reload (`MemoryIndex.settings`):
    the query settings, the citations mode and dreaming's time zone are read per search."""

    def __init__(self, settings: Settings, store: IndexStore, provider: EmbeddingProvider | None,
                 health: ProviderHealth, maintainer: Maintainer, recalls: Recalls) -> None:
        self.settings = settings
        self.store = store
        self.provider = provider
        self.model = maintainer.model
        self.health = health  # shared with the maintainer: a failed fill means keyword search
        self.maintainer = maintainer  # builds a missing index, heals a damaged one
        self.recalls = recalls
        # A reader that meets a damaged index calls this instead of healing it itself (the
        # daemon: its writer thread rebuilds, the request answers `unavailable` at once).
        self.on_damage: Callable[[str], None] | None = None
        self._query_vectors = QueryVectors(settings.embedding.query_cache_size)
        self._line_days = LineDays()  # transcripts' and MEMORY.md's days, for dated queries
        self._projects = SessionProjects()  # the folders agents' sessions ran in
        self._built = False  # see ensure_built

    def search(self, query: str, max_results: int | None = None,
               min_score: float | None = None, sources: Sequence[str] | None = None,
               explain: bool = False, *, record: bool = True,
               today: date | None = None, project: str | None = None) -> Searched:
        """`today`: the day "yesterday" and "last week" count from (default: the local date, in
        `dreaming.timezone`); pinned by tests and replays. `project`: only other agents'
        sessions that ran in this absolute folder."""
        if project is not None:
            return self._in_project(query, max_results, min_score, sources, explain,
                                    record=record, today=today, project=project)
        # the protocol's own rule (type, valid Unicode, MAX_QUERY_BYTES): one limit whichever
        # way a query comes in
        query = params.text("query", query, params.MAX_QUERY_BYTES, empty_ok=True).strip()
        if sources is not None:
            bad = [s for s in sources if s not in SOURCES]
            if bad:
                raise BadRequestError(f"unknown source(s) {bad}; use {', '.join(SOURCES)}")
        if not query:
            return self._searched([], mode=self._mode(""))
        q = self.settings.query
        max_results = q.max_results if max_results is None else max_results
        min_score = q.min_score if min_score is None else min_score
        self.ensure_built()
        from openmemd.search.dated import notes_around
        from openmemd.search.pipeline import search_outcome

        where = CandidateFilter.of_search(sources, derived=q.dreaming_reports)
        said = self._understand(query, today, sources, where)
        dates = said.searched
        wanted = query if dates is None else dates.query  # the date words are not searched
        degraded = [""]

        def run(reader: StoreReader) -> SearchOutcome:
            # asked again on a retry: a healed index is searched by keyword until its
            # vectors are back (the embedding itself is cached)
            vector, degraded[0] = self._query_vector(wanted) if wanted else (None, "")
            return search_outcome(reader, query, query_vector=vector, model=self.model,
                                  settings=q, max_results=max_results, min_score=min_score,
                                  sources=sources, now=time.time(), explain=explain,
                                  dates=dates, asked=said.asked)

        found = self.read(run)
        hits = found.hits
        around = said.around
        if dates is not None and dates.about_date and not hits:
            around = self.read(functools.partial(notes_around, dates=dates, where=where))
        pending = 0
        if not hits and self.provider is not None and not degraded[0]:
            # "Nothing" is not to be trusted while chunks wait for their vectors (a first
            # index, a model still loading): they are searched by keyword only until then.
            pending = self.read(lambda reader: reader.count_pending_vectors(
                self.model, derived=q.dreaming_reports))
        own = [h for h in hits if h.namespace in ("", self.store.namespace)]
        # Dreaming promotes only this workspace's own notes, and only what answered: the
        # relaxed fallback's keyword matches were shown because nothing did.
        if record and own and not any(h.relaxed for h in hits):
            self.recalls.record(query, own, self.settings.dreaming.timezone)
        dates_said = said_dates(said.dates, around, nearby=said.nearby)
        # The range holds no note: the nearest notes by date are the answer's place, and for a
        # question about the date the nearest miss by meaning (a note of some other day)
        # would only mislead; a topic's is still its nearest miss.
        nearest = None if found.nearest is None or (
            dates_said is not None and dates_said.nearest_notes is not None
            and dates_said.about == "date") else reply_nearest(found.nearest)
        cited = citations.apply(hits, self.settings.citations)  # after recording: raw snippets
        return self._searched(cited, mode=self._mode(degraded[0]), dates=dates_said,
                              nearest=nearest, pending_vectors=pending)

    def _in_project(self, query: str, max_results: int | None, min_score: float | None,
                    sources: Sequence[str] | None, explain: bool, *, record: bool,
                    today: date | None, project: str) -> Searched:
        """A search of the agent sources only, its hits kept when their session ran in
        `project`; more candidates are asked for, as the filter comes after ranking."""
        if not os.path.isabs(project):
            raise BadRequestError(f"project must be an absolute path; got {project[:200]!r}")
        scope = self.maintainer.scope
        agents = [s for s in (sources or scope.sources) if scope.agent_root(s) is not None]
        if not agents:
            raise BadRequestError("project narrows Claude Code and Codex sessions, and neither "
                                  'is indexed: add "claude-code" or "codex" to sources')
        wanted = self.settings.query.max_results if max_results is None else max_results
        found = self.search(query, min(wanted * PROJECT_OVERSAMPLE, 100), min_score, agents,
                            explain, record=False, today=today)
        kept = [h for h in found.hits if self._projects.has(scope.agent_root(h.source), h.path,
                                                       h.source, project)][:wanted]
        # Recorded as the unnarrowed search records: an agent's hit is recalled by its path and
        # lines, its message read again from the session file (api/session_dreams.py), so the
        # citation a snippet carries by now does not matter.
        own = [h for h in kept if h.namespace in ("", self.store.namespace)]
        if record and own:
            self.recalls.record(query, own, self.settings.dreaming.timezone)
        return found._replace(hits=kept)

    def _understand(self, query: str, today: date | None, sources: Sequence[str] | None,
                    where: CandidateFilter) -> Understood:
        """The dates `query` names and what is searched of them."""
        from openmemd.search.dated import latest_with_notes, notes_around, told_nearby
        from openmemd.search.dates.query import understand_dates
        from openmemd.search.dates.seasons import southern

        tz = resolve_timezone(self.settings.dreaming.timezone)
        if today is None:
            today = date.fromisoformat(day_bucket(datetime.now(timezone.utc), tz))
        dates = understand_dates(query, today, southern=southern(getattr(tz, "key", None)))
        if dates is None:
            return Understood()
        dates = self.read(functools.partial(latest_with_notes, dates=dates, where=where))
        said = dates
        dates = dataclasses.replace(dates, line_days=self._line_days.in_range(
            self.maintainer.scope, dates.start, dates.covers, tz, sources=sources))
        if dates.about_date:
            return Understood(said, dates)
        around = self.read(functools.partial(notes_around, dates=dates, where=where))
        if around is None:
            return Understood(said, dates)
        # A topic asked of a time no note is from is looked for in the notes written within a
        # week of it (search/dated.py); with none that near it cannot be narrowed by the time,
        # and its date words may be what a note says ("a hike last summer near Fort Wayne",
        # asked of a chat whose notes stop in 2023): searched as if no date were named. The
        # reply names the nearest notes.
        nearby = self.read(functools.partial(told_nearby, dates=dates, around=around,
                                             where=where))
        if nearby is None:
            # the words that must show an answer, when fewer than those searched
            return Understood(said, None, around, asked=dates.query)
        # in the year found for a date said without one
        return Understood(nearby.dates, nearby.near, nearby.around, nearby=True)

    def _searched(self, hits: list[SearchHit], *, mode: tuple[str, str],
                  dates: DatesSaid | None = None, nearest: Nearest | None = None,
                  pending_vectors: int = 0) -> Searched:
        return Searched(hits, provider=self.provider.id if self.provider is not None
                        else "none", model=self.model, mode=mode[0], degraded=mode[1],
                        citations=self.settings.citations, dates=dates, nearest=nearest,
                        pending_vectors=pending_vectors)

    def ensure_built(self) -> None:
        """First search on a never-indexed workspace: build it now (OpenClaw's bootstrap), its
        keyword rows first (`Maintainer.sync_keywords_first`), so this search answers by
        keyword at once while the vectors fill in the background; so does a damaged one a
        one-shot caller heals. One synced in this process is built."""
        # an index, once built, stays built: no check on every search
        if self._built or self.maintainer.last_sync_at is not None:
            return
        damaged = False
        if self.store.exists():
            try:  # the file may go between the check and the open (a rebuild moves it)
                if self.store.reader().read_meta() is not None:
                    self._built = True
                    return
            except IndexDamagedError:
                damaged = self.on_damage is None  # the daemon: its writer is building it
            except UnavailableError:
                pass
        try:
            if self.on_damage is not None:  # the daemon, before its first reconcile
                self.maintainer.sync()
            else:
                self.maintainer.sync_keywords_first(wait=0.0 if damaged else FOREGROUND_FILL_S)
        except IndexLockedError:
            pass  # another process is building it; search what exists

    def read(self, fn: Callable[[StoreReader], T]) -> T:
        """Run `fn(reader)` on this thread's reader. On a damaged index a one-shot caller
        heals it now (its keyword rows first, `Maintainer.sync_keywords_first`) and retries
        once; the daemon's readers answer `unavailable` and leave the rebuild to its writer
        (see `on_damage`)."""
        try:
            return fn(self.store.reader())
        except _STORE_ERRORS as exc:
            error = self.failure(exc)
            if self.on_damage is not None or not isinstance(error, IndexDamagedError):
                raise error from None
        try:
            self.maintainer.sync_keywords_first()
        except IndexLockedError:  # another process is the writer: it heals the index
            raise error from None
        try:
            return fn(self.store.reader())
        except _STORE_ERRORS as exc:
            raise self.failure(exc) from None

    def failure(self, exc: BaseException) -> BaseException:
        """What a failed read tells its caller; damage also asks for a rebuild (`on_damage`)."""
        if not isinstance(exc, IndexDamagedError):
            return exc
        reason = str(exc)
        log.warning("index_read_failed", error=reason, rebuild_requested=bool(self.on_damage))
        if self.on_damage is not None:
            self.on_damage(reason)
        return IndexDamagedError(
            f"the index is missing or damaged ({reason}); it is being rebuilt from the "
            "Markdown, try again in a moment")

    # -- the query's embedding -------------------------------------------------------------------
    def _query_vector(self, query: str) -> tuple[NDArray[np.float32] | None, str]:
        """The query's embedding, or None and why (keyword-only search while it is down)."""
        if self.provider is None:
            return None, ""
        if self.maintainer.filling_in_background:  # a ranking by the few vectors back
            # would put those chunks first, whatever their words
            return None, self.maintainer.build.note()
        if self.health.skip_queries():
            return None, self.health.problem
        try:
            vector = self._query_vectors.get(self.provider, query)
        except EmbeddingError as exc:
            return None, self.health.failed(exc)
        self.health.recovered()
        return vector, ""

    def warm(self) -> None:
        """Load the model and run one query embedding, so the first real search is fast."""
        specificity("memory")  # builds the English word ranks (~80 ms) here, not in a request
        if self.provider is not None:
            try:
                self._query_vectors.get(self.provider, "openmemd warm-up")
            except EmbeddingError as exc:
                self.health.failed(exc)

    def _mode(self, degraded: str) -> tuple[str, str]:
        """A search's mode, and why it was keyword-only although a provider is set."""
        if self.provider is None:
            return "fts-only", ""
        return ("fts-only", degraded) if degraded else ("hybrid", "")
