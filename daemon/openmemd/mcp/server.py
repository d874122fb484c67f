"""`openmemd mcp` in its own process: the memory's MCP tools (server/mcp_tools.py) over stdio.

Where it runs: a daemon that has the SDK hosts the sessions itself (server/mcp_host.py and
server/mcp_session.py: the same tools on the daemon's Dispatcher, the SDK's stdio transport on
the connection), and `openmemd mcp` is only a byte pipe to it (mcp_pipe.py),
which starts in a fraction of a second. Otherwise this module serves stdio in the `openmemd
mcp` process (`serve`), paying the SDK's import (about 2 s of CPU) before `initialize`.

In process, one memory whichever way in: when a daemon serves this agent and workspace, every
call is a request to its socket (its searches count as recalls for dreaming, its watcher
indexes new notes); otherwise calls run in this process exactly like the CLI, one call at a
time, the index opened per call so a daemon started later can take the writer lock. A daemon
that goes away mid-session is replaced by in-process work; one that appears is used from the
next call on. Nothing below `api` (numpy, SQLite, the model) nor pyzmq is imported until the
first tool call needs it.
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.stdio import stdio_server

from openmemd.config import Settings
from openmemd.errors import UnavailableError
from openmemd.log import get_logger
from openmemd.mcp.tools import build_server, status_summary
from openmemd.protocol.requests import (
    AddRequest,
    GetRequest,
    Request,
    SearchRequest,
    StatusRequest,
)

if TYPE_CHECKING:  # imported when used: neither belongs in the start-up path
    from openmemd.api.memory_index import MemoryIndex
    from openmemd.client import Client

log = get_logger(__name__)

DAEMON_TIMEOUT = 30.0  # per request: a host must never hang on a stuck daemon
RECHECK_SECONDS = 5.0  # without a daemon, look for one again at most this often


def find_daemon(settings: Settings, args: argparse.Namespace) -> Client | None:
    """A client of the daemon serving this agent and workspace, or None (the CLI's rule)."""
    from openmemd.discovery import connect

    return connect(settings, args.agent, args.workspace)


class Backend:
    """Runs typed requests against the daemon when one serves us, else in this process."""

    def __init__(self, settings: Settings, args: argparse.Namespace) -> None:
        self.settings = settings
        self.args = args
        self.agent: str = args.agent
        self._client: Client | None = None
        self._checked_at = float("-inf")
        self._state_lock = threading.Lock()
        self._local_lock = threading.Lock()  # in-process calls run one at a time

    def _daemon(self) -> Client | None:
        with self._state_lock:
            now = time.monotonic()
            if self._client is None and now - self._checked_at >= RECHECK_SECONDS:
                self._checked_at = now
                self._client = find_daemon(self.settings, self.args)
                if self._client is not None:
                    self._client.timeout = DAEMON_TIMEOUT
                    log.info("mcp_using_daemon", endpoint=self._client.endpoint)
            return self._client

    def _drop(self, client: Client) -> None:
        with self._state_lock:
            if self._client is client:
                self._client = None
                self._checked_at = time.monotonic()
        client.close()

    def run(self, request: Request) -> dict[str, Any]:
        from openmemd.client import DaemonNotRunning, RequestTimeout

        client = self._daemon()
        if client is not None:
            try:
                return self._remote(client, request)
            except (DaemonNotRunning, RequestTimeout) as exc:
                self._drop(client)
                log.warning("mcp_daemon_lost", error=str(exc))
                if isinstance(request, AddRequest):
                    # It may have written the note before it went away (the client cannot tell
                    # a lost reply from an unsent request): adding it here too could store it
                    # twice. The next call runs in process.
                    raise UnavailableError(
                        "the openmemd daemon went away while adding the note; it may or may "
                        "not have been written: search for it before adding it again") from None
        return self._local(request)

    # -- through the daemon -------------------------------------------------------------------
    def _remote(self, client: Client, request: Request) -> dict[str, Any]:
        if isinstance(request, SearchRequest):
            reply = client.search(request.query, max_results=request.max_results,
                                  min_score=request.min_score,
                                  sources=list(request.sources) if request.sources else None,
                                  agent=self.agent)
        elif isinstance(request, GetRequest):
            reply = client.get(request.path, from_line=request.from_line,
                               lines=request.lines, agent=self.agent)
        elif isinstance(request, AddRequest):
            reply = client.add(request.text, request.target, agent=self.agent)
        else:
            reply = client.status(agent=self.agent)
            st = (reply.get("agents") or {}).get(self.agent) or {}
            return status_summary(st, reply.get("health", "unknown"),
                                   reply.get("problems", []), mode="daemon",
                                   daemon={"pid": reply.get("pid"),
                                           "endpoint": reply.get("endpoint")})
        return {k: v for k, v in reply.items() if k not in ("ok", "id")}

    # -- in this process ----------------------------------------------------------------------
    def _local(self, request: Request) -> dict[str, Any]:
        from openmemd.api.memory_index import MemoryIndex

        with self._local_lock, MemoryIndex.open(self.args.workspace, agent_id=self.agent,
                                                config=self.settings) as index:
            if isinstance(request, SearchRequest):
                return _local_search(index, request)
            if isinstance(request, GetRequest):
                return dict(index.get(request.path, request.from_line, request.lines))
            if isinstance(request, AddRequest):
                return dict(index.add(request.text, request.target))
            assert isinstance(request, StatusRequest)
            st = index.status()
            from openmemd.api.health import agent_problems, overall

            problems = agent_problems(self.agent, st, watch_enabled=False)
            return status_summary(st, overall(problems), problems, mode="in-process")

    def close(self) -> None:
        with self._state_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()


def _local_search(index: MemoryIndex, request: SearchRequest) -> dict[str, Any]:
    started = time.perf_counter()
    stale = index.catch_up()  # no watcher here, as in the CLI
    if stale:
        log.warning("mcp_search_index_not_current", reason=stale)
    hits = index.search(request.query, max_results=request.max_results,
                        min_score=request.min_score,
                        sources=list(request.sources) if request.sources else None)
    index.flush_recalls()
    return {"results": [h.to_dict() for h in hits], **index.search_meta(),
            "tookMs": round((time.perf_counter() - started) * 1000, 2)}


def serve(settings: Settings, args: argparse.Namespace) -> int:
    """Serve until the host closes stdin; 0 then."""
    backend = Backend(settings, args)
    server = build_server(backend)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        backend.close()
    return 0
