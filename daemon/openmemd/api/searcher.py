"""The reading side of `MemoryIndex`: a search from the query to its cited results.

Searches run on the store's per-thread readers and never wait for a sync. Around the pipeline
(`openmemd.search.pipeline`) this holds what a search needs besides the index: the query's
embedding (cached; skipped while the provider is down, so the search runs keyword-only), the
read that meets a damaged index, the recall recording dreaming ranks by, and the citations.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Callable, Sequence
from datetime import date, datetime, timezone
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from openmemd.api.dreams import Recalls
from openmemd.api.maintainer import Maintainer
from openmemd.config import SOURCES, Settings
from openmemd.dreaming.clock import day_bucket, resolve_timezone
from openmemd.embed.base import EmbeddingError, EmbeddingProvider
from openmemd.embed.shared import ProviderHealth, QueryVectors
from openmemd.errors import BadRequestError, IndexLockedError, UnavailableError
from openmemd.index.line_days import LineDays
from openmemd.log import get_logger
from openmemd.protocol import params
from openmemd.search import citations
from openmemd.search.commonness import specificity
from openmemd.search.results import SearchHit, SearchOutcome
from openmemd.store.base import (
    CandidateFilter,
    DiskFullError,
    IndexDamagedError,
    IndexStore,
    StoreReader,
    StoreUnavailableError,
)

log = get_logger(__name__)

T = TypeVar("T")

# A search with no daemon waits at most this long for the vectors a catch-up left to embed
# (a few edited chunks make it in time); then it answers by keyword while they fill.
FOREGROUND_FILL_S = 1.0
# What a read can raise about the index itself (the store's errors, see store.base).
_STORE_ERRORS = (IndexDamagedError, DiskFullError, StoreUnavailableError)


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
        self._local = threading.local()  # this thread's last search mode
        self._built = False  # see ensure_built

    def search(self, query: str, max_results: int | None = None,
               min_score: float | None = None, sources: Sequence[str] | None = None,
               explain: bool = False, *, record: bool = True,
               today: date | None = None) -> list[SearchHit]:
        """`today`: the day "yesterday" and "last week" count from (default: the local date, in
        `dreaming.timezone`); pinned by tests and replays."""
        # the protocol's own rule (type, valid Unicode, MAX_QUERY_BYTES): one limit whichever
        # way a query comes in
        query = params.text("query", query, params.MAX_QUERY_BYTES, empty_ok=True).strip()
        if sources is not None:
            bad = [s for s in sources if s not in SOURCES]
            if bad:
                raise BadRequestError(f"unknown source(s) {bad}; use {', '.join(SOURCES)}")
        self._local.nearest = None
        self._local.dates = None
        self._local.around = None
        self._local.nearby = False
        self._local.pending = 0
        if not query:
            return []
        q = self.settings.query
        max_results = q.max_results if max_results is None else max_results
        min_score = q.min_score if min_score is None else min_score
        self.ensure_built()
        from openmemd.search.dated import latest_with_notes, notes_around, told_nearby
        from openmemd.search.dates.query import understand_dates
        from openmemd.search.dates.seasons import southern
        from openmemd.search.pipeline import search_outcome

        tz = resolve_timezone(self.settings.dreaming.timezone)
        if today is None:
            today = date.fromisoformat(day_bucket(datetime.now(timezone.utc), tz))
        dates = understand_dates(query, today, southern=southern(getattr(tz, "key", None)))
        where = CandidateFilter.of_search(sources, derived=q.dreaming_reports)
        if dates is not None:
            dates = self.read(functools.partial(latest_with_notes, dates=dates, where=where))
        self._local.dates = dates
        if dates is not None:
            dates = dataclasses.replace(dates, line_days=self._line_days.in_range(
                self.maintainer.scope, dates.start, dates.covers, tz, sources=sources))
        asked = None  # the words that must show an answer, when fewer than those searched
        if dates is not None and not dates.about_date:
            around = self.read(functools.partial(notes_around, dates=dates, where=where))
            if around is not None:
                # A topic asked of a time no note is from is looked for in the notes written
                # within a week of it (search/dated.py); with none that near it cannot be
                # narrowed by the time, and its date words may be what a note says ("a hike
                # last summer near Fort Wayne", asked of a chat whose notes stop in 2023):
                # searched as if no date were named. The reply names the nearest notes.
                nearby = self.read(functools.partial(told_nearby, dates=dates, around=around,
                                                     where=where))
                if nearby is None:
                    self._local.around, asked, dates = around, dates.query, None
                else:  # in the year found for a date said without one
                    self._local.dates, self._local.around = nearby.dates, nearby.around
                    self._local.nearby = True
                    dates = nearby.near
        wanted = query if dates is None else dates.query  # the date words are not searched

        def run(reader: StoreReader) -> SearchOutcome:
            # asked again on a retry: a healed index is searched by keyword until its
            # vectors are back (the embedding itself is cached)
            vector, self._local.degraded = (self._query_vector(wanted) if wanted
                                            else (None, ""))
            return search_outcome(reader, query, query_vector=vector, model=self.model,
                                  settings=q, max_results=max_results, min_score=min_score,
                                  sources=sources, now=time.time(), explain=explain,
                                  dates=dates, asked=asked)

        found = self.read(run)
        hits = found.hits
        self._local.nearest = found.nearest  # for search_meta: what a lower min_score shows
        if dates is not None and dates.about_date and not hits:
            self._local.around = self.read(functools.partial(notes_around, dates=dates,
                                                             where=where))
        if not hits and self.provider is not None and not self._local.degraded:
            # "Nothing" is not to be trusted while chunks wait for their vectors (a first
            # index, a model still loading): they are searched by keyword only until then.
            self._local.pending = self.read(lambda reader: reader.count_pending_vectors(
                self.model, derived=q.dreaming_reports))
        own = [h for h in hits if h.namespace in ("", self.store.namespace)]
        if record and own:  # dreaming promotes only this workspace's own notes
            self.recalls.record(query, own, self.settings.dreaming.timezone)
        return citations.apply(hits, self.settings.citations)  # after recording: raw snippets

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

    def search_mode(self) -> dict[str, str]:
        """`mode` of this thread's last search, and why it was keyword-only although a
        provider is set (`degraded`)."""
        degraded = getattr(self._local, "degraded", "")
        if self.provider is None:
            return {"mode": "fts-only"}
        return {"mode": "fts-only", "degraded": degraded} if degraded else {"mode": "hybrid"}

    def search_meta(self) -> dict[str, Any]:
        """What a search reply says besides its results, the same on every way in (CLI,
        socket, MCP): provider, model, mode (and why it degraded), the citations mode, the
        dates the query was understood to name (`search.dates.query.DateQuery.to_meta`; for a query
        about dates that hold no note, the dated notes nearest them: `nearestNotes`, with
        `searchedFirst` when a topic was looked for in those within a week) and, when
        this thread's last search found nothing else, the nearest miss (`nearest`) and the
        chunks still waiting for a vector, searched by keyword only (`pendingVectors`)."""
        dates = getattr(self._local, "dates", None)
        nearest = getattr(self._local, "nearest", None)
        around = getattr(self._local, "around", None)
        nearby = getattr(self._local, "nearby", False)
        pending = getattr(self._local, "pending", 0)
        dates_meta = dates.to_meta() if dates is not None else None
        if dates_meta is not None and around is not None:
            # The range holds no note: the nearest notes by date are the answer's place, and
            # for a question about the date the nearest miss by meaning (a note of some other
            # day) would only mislead; a topic's is still its nearest miss.
            dates_meta["nearestNotes"] = {"before": around[0], "after": around[1]}
            if nearby:  # those of them within a week were searched as the dates' notes
                dates_meta["nearestNotes"]["searchedFirst"] = True
            if dates_meta["about"] == "date":
                nearest = None
        return {"provider": self.provider.id if self.provider is not None else "none",
                "model": self.model, **self.search_mode(),
                "citations": self.settings.citations,
                **({"dates": dates_meta} if dates_meta is not None else {}),
                **({"nearest": nearest.to_dict()} if nearest is not None else {}),
                **({"pendingVectors": pending} if pending else {})}
