"""Request handling: typed requests -> typed replies, for the ZeroMQ workers (one method per
op, `protocol.handler.answer`).

Errors are raised as `openmemd.errors` exceptions; the server turns them into error replies
with their protocol code.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from openmemd import __version__
from openmemd.api import health
from openmemd.api.handler import context_reply, search_reply
from openmemd.api.long_term import demote_reply, dreams_reply, memory_reply, undo_reply
from openmemd.config import index_location
from openmemd.errors import NotFoundError
from openmemd.protocol.handler import answer
from openmemd.protocol.records import replace
from openmemd.protocol.replies import (
    AddReply,
    ContextReply,
    DaemonPingReply,
    DashboardLink,
    DemoteReply,
    DreamReply,
    DreamsReply,
    GetReply,
    MemoryReply,
    Reply,
    SearchReply,
    ServedAgent,
    SyncReply,
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
from openmemd.protocol.status import AgentStatus, DaemonStatus, ReconcileTimes, SchedulerStatus
from openmemd.server.agent import AgentRuntime
from openmemd.server.util import iso


class Dispatcher:
    def __init__(self, agents: Mapping[str, AgentRuntime], *, endpoint: str,
                 watch_enabled: Callable[[], bool],
                 scheduler_info: Callable[[], SchedulerStatus],
                 server_info: Callable[[], dict[str, Any]] | None = None,
                 config_file: str = "",
                 config_files: Callable[[], list[str]] | None = None,
                 notes: Callable[[], list[str]] | None = None,
                 mcp_socket: Callable[[], str | None] | None = None,
                 install_problems: Callable[[], list[str]] | None = None,
                 config_checked: Callable[[], list[int]] | None = None,
                 dashboard: Callable[[], DashboardLink | None] | None = None) -> None:
        self.agents = agents
        self.endpoint = endpoint
        self.started = time.time()
        self._started_mono = time.monotonic()
        self._watch_enabled = watch_enabled
        self._scheduler_info = scheduler_info
        self._server_info = server_info or dict
        self._config_file = config_file
        self._config_files = config_files or list
        self._notes = notes or list
        self._mcp_socket = mcp_socket or (lambda: None)
        self._install_problems = install_problems or list  # install_watch.py
        self._config_checked = config_checked or list  # the config file it loaded (discovery)
        self._dashboard = dashboard or (lambda: None)  # where `openmemd dashboard` points

    def __call__(self, request: Request) -> Reply:
        return answer(self, request)

    def ping(self, request: PingRequest) -> DaemonPingReply:
        """Cheap (no disk access): enough for a client to decide whether this daemon serves
        the agent, workspace and index (state dir) it wants."""
        return DaemonPingReply(
            pong=True, version=__version__, pid=os.getpid(),
            agents={a.agent_id: ServedAgent(str(a.workspace) if a.workspace else None,
                                            a.index is not None,
                                            index_location(a.settings, a.agent_id))
                    for a in self.agents.values()},
            # where `openmemd mcp` finds the sessions this daemon hosts (mcp_host.py)
            mcp=self._mcp_socket(),
            # the config file it loaded and checked, as it was then: a command it answers
            # without checking its own (cli/fast.py) needs this to be that file
            config=tuple(self._config_checked()), dashboard=self._dashboard())

    def search(self, request: SearchRequest) -> SearchReply:
        return search_reply(self._agent(request.agent).require_index(), request)

    def get(self, request: GetRequest) -> GetReply:
        index = self._agent(request.agent).require_index()
        return GetReply.from_json(index.get(request.path, request.from_line, request.lines,
                                            namespace=request.namespace))

    def sync(self, request: SyncRequest) -> SyncReply:
        return self._agent(request.agent).sync(request.force, request.wait)

    def dream(self, request: DreamRequest) -> DreamReply:
        return self._agent(request.agent).dream(request.phase, request.dry_run)

    def add(self, request: AddRequest) -> AddReply:
        return self._agent(request.agent).add(request.text, request.target)

    def context(self, request: ContextRequest) -> ContextReply:
        """Read from the Markdown: no index needed."""
        agent = self._agent(request.agent)
        return context_reply(agent.workspace or agent.settings.workspace_for(agent.agent_id),
                             agent.settings, request)

    # The Memory and Dreams views: from the Markdown, like the startup context (api/long_term.py).
    def memory(self, request: MemoryRequest) -> MemoryReply:
        agent = self._agent(request.agent)
        return memory_reply(self._workspace(agent), agent.settings, request)

    def demote(self, request: DemoteRequest) -> DemoteReply:
        agent = self._agent(request.agent)
        return demote_reply(self._workspace(agent), agent.settings, request)

    def undo(self, request: UndoRequest) -> DemoteReply:
        agent = self._agent(request.agent)
        return undo_reply(self._workspace(agent), agent.settings, request)

    def dreams(self, request: DreamsRequest) -> DreamsReply:
        agent = self._agent(request.agent)
        return dreams_reply(self._workspace(agent), agent.settings, request)

    @staticmethod
    def _workspace(agent: AgentRuntime) -> str | os.PathLike[str]:
        return agent.workspace or agent.settings.workspace_for(agent.agent_id)

    def close(self) -> None:
        """The daemon stops its agents itself (server/daemon.py)."""

    def _agent(self, agent_id: str) -> AgentRuntime:
        agent = self.agents.get(agent_id)
        if agent is None:
            raise NotFoundError(f"unknown agent {agent_id!r}; this daemon serves "
                                f"{', '.join(self.agents)}")
        return agent

    def status(self, request: StatusRequest) -> DaemonStatus:
        chosen = [self._agent(request.agent)] if request.agent else list(self.agents.values())
        sched = self._scheduler_info()
        jobs = sched.jobs
        agents: list[AgentStatus] = []
        problems: list[str] = []
        for agent in chosen:
            st = agent.status(deep=request.deep)
            last = st.indexer.last_reconcile if st.indexer is not None else None
            st = replace(st, reconcile=ReconcileTimes(last.at if last else None,
                                                      jobs.get("reconcile")),
                         dreaming=replace(st.dreaming, next_run=jobs.get("dreaming"))
                         if st.dreaming is not None else None)
            agents.append(st)
            problems += health.agent_problems(st, watch_enabled=self._watch_enabled())
        if not sched.running:
            problems.append("scheduler is not running")
        server = self._server_info()
        problems += server.get("problems") or []  # dead, stuck or replaced request workers
        problems += self._install_problems()  # openmemd upgraded under this daemon
        return DaemonStatus(
            running=True, health=health.overall(problems), problems=tuple(problems),
            version=__version__, pid=os.getpid(), endpoint=self.endpoint,
            started_at=iso(self.started),
            uptime_seconds=round(time.monotonic() - self._started_mono, 1),
            rss_bytes=health.rss_bytes(), cpu_seconds=round(health.cpu_seconds(), 2),
            config_file=self._config_file or None, config_files=tuple(self._config_files()),
            notes=tuple(self._notes()),
            scheduler=sched,
            server=server, agents=tuple(agents))
