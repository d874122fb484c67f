"""The local request handler: the requests the daemon answers, answered in this process over
a `MemoryIndex` (a command or an MCP session when no daemon serves the workspace).

The replies are the daemon's records (protocol/replies.py), so whoever holds a handler renders one
reply whichever way it came. Each call opens the index and closes it again: a daemon started
meanwhile can take the writer lock, and nothing stays loaded between two commands -- except
while a search's catch-up embeds in the background (a first index: minutes to hours): that
index stays open for the next calls of a long session (MCP), until it is done or the handler
closes (a one-shot command: the fill stops, what it embedded is kept). Calls run one at a
time (an MCP host may send several at once).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Protocol

from openmemd import __version__
from openmemd.api import PROBE_QUERY, health
from openmemd.api.dreams import dream
from openmemd.api.long_term import demote_reply, dreams_reply, memory_reply, undo_reply
from openmemd.api.memory_index import MemoryIndex
from openmemd.config import DEFAULT_AGENT, Settings
from openmemd.errors import OpenmemdError, WorkspaceError
from openmemd.progress import Progress, reporter
from openmemd.protocol.handler import answer
from openmemd.protocol.records import replace
from openmemd.protocol.replies import (
    AddReply,
    ContextReply,
    DemoteReply,
    DreamReply,
    DreamResult,
    DreamsReply,
    GetReply,
    MemoryReply,
    PingReply,
    Reply,
    SearchReply,
    SyncReply,
    SyncSummary,
)
from openmemd.protocol.requests import (
    AddRequest,
    ContextRequest,
    DemoteRequest,
    DreamRequest,
    DreamsRequest,
    GetRequest,
    MemoryRequest,
    PingRequest,
    Request,
    SearchRequest,
    StatusRequest,
    SyncRequest,
    UndoRequest,
)
from openmemd.protocol.status import AgentStatus, DaemonStatus, Probe


class _Searched(Protocol):
    def reply(self, took_ms: float) -> SearchReply: ...


class Searchable(Protocol):
    """What a search reply needs of an index (the daemon's served index is one too)."""

    def search(self, query: str, max_results: int | None = None,
               min_score: float | None = None, sources: Sequence[str] | None = None,
               explain: bool = False, *, record: bool = True,
               today: date | None = None) -> Sequence[object]: ...
    def searched(self, query: str, max_results: int | None = None,
                 min_score: float | None = None, sources: Sequence[str] | None = None,
                 explain: bool = False, *, record: bool = True,
                 today: date | None = None, project: str | None = None) -> _Searched: ...


def search_reply(index: Searchable, request: SearchRequest) -> SearchReply:
    """A search's reply, the same from the daemon and in process: results, what answered
    (provider, model, mode) and the time it took."""
    started = time.perf_counter()
    found = index.searched(request.query, max_results=request.max_results,
                           min_score=request.min_score,
                           sources=list(request.sources) if request.sources else None,
                           explain=request.explain, today=request.today,
                           project=request.project)
    return found.reply(took_ms=round((time.perf_counter() - started) * 1000, 2))


def context_reply(workspace: str | os.PathLike[str], settings: Settings,
                  request: ContextRequest) -> ContextReply:
    """The session's startup context, the same from the daemon and in process: it reads the
    Markdown files (no index needed)."""
    from openmemd.context import startup_context

    return ContextReply.from_json(
        {"agent": request.agent,
         **startup_context(workspace, settings, request.today,
                           request.max_chars).to_dict()})


def probe(index: Searchable) -> Probe:
    """`status --deep`: one search proves the index answers (never recorded as a recall)."""
    started = time.perf_counter()
    try:
        hits = index.search(PROBE_QUERY, record=False)
    except Exception as exc:
        return Probe(ok=False, error=f"{type(exc).__name__}: {exc}",
                     ms=round((time.perf_counter() - started) * 1000, 1))
    return Probe(ok=True, results=len(hits),
                 ms=round((time.perf_counter() - started) * 1000, 1))


class LocalHandler:
    """Answers requests in this process. `workspace` (the --workspace flag) replaces the
    configured workspace of agent `owner`; `progress` shows a sync's progress; `notice`
    hears why a search reads an index as it is (another writer, a full disk); `fill_progress`
    hears a fill a search's catch-up left running in the background."""

    def __init__(self, settings: Settings, *, workspace: str | os.PathLike[str] | None = None,
                 owner: str = DEFAULT_AGENT, progress: Progress | None = None,
                 notice: Callable[[str], None] | None = None,
                 fill_progress: Progress | None = None) -> None:
        self.settings = settings
        self.workspace = workspace
        self.owner = owner
        self.progress = progress
        self.notice = notice
        self.fill_progress = fill_progress
        self._lock = threading.RLock()  # held by a call, and again by the method it calls
        self._filling: MemoryIndex | None = None  # kept open while it embeds (see above)

    def __call__(self, request: Request) -> Reply:
        with self._lock:
            return answer(self, request)

    def ping(self, request: PingRequest) -> PingReply:
        return PingReply(pong=True, version=__version__, pid=os.getpid())

    def dream(self, request: DreamRequest) -> DreamReply:
        """Dreaming reads the Markdown, not the index."""
        settings = self.settings.for_agent(request.agent)
        return DreamReply(DreamResult.from_json(dream(
            self._workspace(request.agent), settings.dreaming, request.phase, request.dry_run,
            settings.context.bootstrap_max_chars, settings.sources)))

    def context(self, request: ContextRequest) -> ContextReply:
        """So does the startup context."""
        return context_reply(self._workspace(request.agent),
                             self.settings.for_agent(request.agent), request)

    # The Memory and Dreams views read and write the Markdown too (api/long_term.py).
    def memory(self, request: MemoryRequest) -> MemoryReply:
        return memory_reply(self._workspace(request.agent),
                            self.settings.for_agent(request.agent), request)

    def demote(self, request: DemoteRequest) -> DemoteReply:
        return demote_reply(self._workspace(request.agent),
                            self.settings.for_agent(request.agent), request)

    def undo(self, request: UndoRequest) -> DemoteReply:
        return undo_reply(self._workspace(request.agent),
                          self.settings.for_agent(request.agent), request)

    def dreams(self, request: DreamsRequest) -> DreamsReply:
        return dreams_reply(self._workspace(request.agent),
                            self.settings.for_agent(request.agent), request)

    def search(self, request: SearchRequest) -> SearchReply:
        with self._lock, self._open(request.agent) as index:
            # no watcher here: bring the index up to date (keyword rows first)
            stale = index.catch_up(self.progress or reporter.get(), self.fill_progress)
            if stale and self.notice is not None:
                self.notice(f"searching the index as it is: {stale}")
            reply = search_reply(index, request)
            index.flush_recalls()
            # vectors still embed here: a one-shot caller says who finishes them
            return replace(reply, indexing=True) if index.filling_in_background else reply

    def get(self, request: GetRequest) -> GetReply:
        with self._lock, self._open(request.agent) as index:
            return GetReply.from_json(index.get(request.path, request.from_line, request.lines,
                                                namespace=request.namespace))

    def sync(self, request: SyncRequest) -> SyncReply:
        with self._lock, self._open(request.agent) as index:
            report = index.sync(force=request.force, progress=self.progress)
            return SyncReply(report=SyncSummary.from_json(report.to_dict()))

    def add(self, request: AddRequest) -> AddReply:
        with self._lock, self._open(request.agent) as index:
            return AddReply.from_json(index.add(request.text, request.target))

    def warm(self, agent: str) -> None:
        """Pay a first search's fixed costs before it comes: the index code and the store
        opened, the embedding model loaded and one query embedded (a long session calls it in
        a background thread when it starts). No index is built or changed; a failure is left
        to the call that meets it to report. A call arriving meanwhile waits for it: the work
        is its own."""
        with self._lock, self._open(agent) as index:
            index.warm()

    def close(self) -> None:
        """Stops a fill left running (what it embedded is kept); nothing else stays open."""
        with self._lock:
            filling, self._filling = self._filling, None
        if filling is not None:
            filling.close()

    def _workspace_arg(self, agent: str) -> str | os.PathLike[str] | None:
        return self.workspace if self.workspace and agent == self.owner else None

    @contextmanager
    def _open(self, agent: str) -> Iterator[MemoryIndex]:
        """The agent's index for one call: the one still filling if it is this agent's."""
        held, self._filling = self._filling, None
        if held is not None and (held.agent_id != agent or not held.filling_in_background):
            held.close()
            held = None
        index = held or MemoryIndex.open(self._workspace_arg(agent), agent_id=agent,
                                         config=self.settings)
        try:
            yield index
        finally:
            if index.filling_in_background:
                self._filling = index
            else:
                index.close()

    def _workspace(self, agent: str) -> Path:
        chosen = self._workspace_arg(agent)
        ws = (Path(chosen).expanduser() if chosen is not None
              else self.settings.workspace_for(agent))
        if not ws.is_dir():
            raise WorkspaceError(f"workspace {ws} does not exist or is not a directory")
        return ws

    def status(self, request: StatusRequest) -> DaemonStatus:
        """A status request answered in process (the command line reads it as is)."""
        with self._lock:
            return self._status(request)

    def _status(self, request: StatusRequest) -> DaemonStatus:
        """Each agent's index as it is on disk; no daemon keeps it fresh (no watcher)."""
        agents: list[AgentStatus] = []
        problems: list[str] = []
        for agent_id in ([request.agent] if request.agent else self.settings.agent_ids()):
            try:
                with self._open(agent_id) as index:
                    index_status = index.status()
                    st = AgentStatus(agent_id, index=index_status,
                                     workspace=index_status.workspace,
                                     probe=probe(index) if request.deep else None)
            except OpenmemdError as exc:
                st = AgentStatus(agent_id, error=str(exc))
            agents.append(st)
            problems += health.agent_problems(st, watch_enabled=False)
        return DaemonStatus(running=False, health=health.overall(problems),
                            problems=tuple(problems), version=__version__,
                            config_file=self.settings.config_file or None, agents=tuple(agents))
