"""`openmemd mcp`: the memory as MCP tools over stdio, on the official SDK's low-level Server.

Tools (names and result shapes are OpenClaw's, so prompts written for it work unchanged):
memory_search, memory_get, memory_status, memory_add. Arguments are checked by the same
validation as the socket protocol (`server.protocol.parse_fields`), so a bad argument gets the
same message whichever way it came in; the check failing is a tool error (`isError`) the model
can read and correct, an unknown tool a protocol error.

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
import json
import threading
import time
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from openmemd import __version__
from openmemd.config import Settings
from openmemd.errors import OpenmemdError, UnavailableError
from openmemd.log import get_logger
from openmemd.server.protocol import (
    AddRequest,
    GetRequest,
    ProtocolError,
    SearchRequest,
    StatusRequest,
    parse_fields,
)

log = get_logger(__name__)

DAEMON_TIMEOUT = 30.0  # per request: a host must never hang on a stuck daemon
RECHECK_SECONDS = 5.0  # without a daemon, look for one again at most this often

INSTRUCTIONS = (
    "This server is the user's long-term memory (Markdown notes indexed for search). Before "
    "answering anything about prior work, decisions, dates, people, preferences or todos, run "
    "memory_search, then memory_get for the lines you need; if confidence stays low, say you "
    "checked. Cite what you use as 'Source: <citation>'. Use memory_add to remember durable "
    "facts the user wants kept.")

_SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 4096,
                  "description": "What to look for, in natural language or keywords "
                                 "(at most 4096 bytes)."},
        "maxResults": {"type": "integer", "minimum": 1, "maximum": 200,
                       "description": "Results to return (default 6)."},
        "minScore": {"type": "number", "minimum": 0, "maximum": 1,
                     "description": "Drop results scoring below this, 0..1 (default 0.35)."},
        "sources": {"type": "array", "minItems": 1, "uniqueItems": True,
                    "items": {"type": "string", "enum": ["memory", "sessions"]},
                    "description": "Restrict to notes ('memory') or session transcripts "
                                   "('sessions')."},
    },
    "required": ["query"],
    "additionalProperties": False,
}
_GET_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                 "description": "Workspace-relative path from a search result, e.g. "
                                "memory/2026-01-02.md or MEMORY.md."},
        "from": {"type": "integer", "minimum": 1, "description": "First line (1-based)."},
        "lines": {"type": "integer", "minimum": 1, "description": "Number of lines."},
    },
    "required": ["path"],
    "additionalProperties": False,
}
_ADD_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1, "maxLength": 4096,
                 "description": "The note, one fact or decision (at most 4096 bytes); "
                                "newlines stay inside one bullet."},
        "target": {"type": "string", "enum": ["daily", "long-term"], "default": "daily",
                   "description": "'daily': today's memory/YYYY-MM-DD.md (default); "
                                  "'long-term': MEMORY.md, for lasting facts and preferences."},
    },
    "required": ["text"],
    "additionalProperties": False,
}

# name -> (protocol op, description, input schema, read-only)
TOOLS: dict[str, tuple[str, str, dict[str, Any], bool]] = {
    "memory_search": ("search", (
        "Search the user's memory (MEMORY.md, dated notes memory/*.md and indexed session "
        "transcripts) by meaning and keywords. Use it before answering anything about prior "
        "work, decisions, dates, people, preferences or todos. Returns results[] (path, "
        "startLine, endLine, score, snippet, source, citation 'path#Lx-Ly') plus provider, "
        "model and mode ('hybrid' or 'fts-only'); read more with memory_get."), _SEARCH_SCHEMA,
        True),
    "memory_get": ("get", (
        "Read lines of a memory file (MEMORY.md, DREAMS.md, memory/**/*.md), usually a "
        "memory_search result: pass its path, and from/lines to read only the part you need. "
        "Returns {path, text, from, lines, totalLines}."), _GET_SCHEMA, True),
    "memory_status": ("status", (
        "Health of the memory: healthy or degraded (with the problems), files indexed and on "
        "disk, chunks, chunks still waiting for a vector, the embedding provider and model, "
        "the workspace, and whether a daemon serves it. Use it when search results look "
        "wrong or empty."), {"type": "object", "properties": {}, "additionalProperties": False},
        True),
    "memory_add": ("add", (
        "Remember something: appends one bullet to today's note memory/YYYY-MM-DD.md, or to "
        "MEMORY.md with target 'long-term'. Use it for durable facts the user wants "
        "remembered (decisions, preferences, people, dates, todos), one fact per call; never "
        "for secrets. It only appends, and a memory_search right after finds it. Returns "
        "{path, startLine, endLine, citation}."), _ADD_SCHEMA, False),
}


def find_daemon(settings: Settings, args: argparse.Namespace) -> Any:
    """A client of the daemon serving this agent and workspace, or None (the CLI's rule)."""
    from openmemd.discovery import connect

    return connect(settings, args.agent, args.workspace)


def tool_request(name: str, arguments: dict[str, Any] | None, agent: str) -> Any:
    """Tool arguments -> the protocol's typed request; ProtocolError says what is wrong."""
    op, _, schema, _ = TOOLS[name]
    arguments = arguments or {}
    unknown = sorted(set(arguments) - set(schema["properties"]))
    if unknown:
        known = ", ".join(schema["properties"]) or "none"
        raise ProtocolError("bad_request", f"unknown argument(s) {', '.join(unknown)[:200]} for "
                                           f"{name}; it takes: {known}")
    return parse_fields({**arguments, "op": op, "agent": agent})


class Backend:
    """Runs typed requests against the daemon when one serves us, else in this process."""

    def __init__(self, settings: Settings, args: argparse.Namespace) -> None:
        self.settings = settings
        self.args = args
        self.agent: str = args.agent
        self._client: Any = None
        self._checked_at = float("-inf")
        self._state_lock = threading.Lock()
        self._local_lock = threading.Lock()  # in-process calls run one at a time

    def _daemon(self) -> Any:
        with self._state_lock:
            now = time.monotonic()
            if self._client is None and now - self._checked_at >= RECHECK_SECONDS:
                self._checked_at = now
                self._client = find_daemon(self.settings, self.args)
                if self._client is not None:
                    self._client.timeout = DAEMON_TIMEOUT
                    log.info("mcp_using_daemon", endpoint=self._client.endpoint)
            return self._client

    def _drop(self, client: Any) -> None:
        with self._state_lock:
            if self._client is client:
                self._client = None
                self._checked_at = time.monotonic()
        client.close()

    def run(self, request: Any) -> dict[str, Any]:
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
    def _remote(self, client: Any, request: Any) -> dict[str, Any]:
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
            return _status_summary(st, reply.get("health", "unknown"),
                                   reply.get("problems", []), mode="daemon",
                                   daemon={"pid": reply.get("pid"),
                                           "endpoint": reply.get("endpoint")})
        return {k: v for k, v in reply.items() if k not in ("ok", "id")}

    # -- in this process ----------------------------------------------------------------------
    def _local(self, request: Any) -> dict[str, Any]:
        from openmemd.api import MemoryIndex

        with self._local_lock, MemoryIndex.open(self.args.workspace, agent_id=self.agent,
                                                config=self.settings) as index:
            if isinstance(request, SearchRequest):
                return _local_search(index, request)
            if isinstance(request, GetRequest):
                return dict(index.get(request.path, request.from_line, request.lines))
            if isinstance(request, AddRequest):
                return index.add(request.text, request.target)
            assert isinstance(request, StatusRequest)
            st = index.status()
            from openmemd.server.health import agent_problems, overall

            problems = agent_problems(self.agent, st, watch_enabled=False)
            return _status_summary(st, overall(problems), problems, mode="in-process")

    def close(self) -> None:
        with self._state_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()


def _local_search(index: Any, request: SearchRequest) -> dict[str, Any]:
    from openmemd.errors import IndexLockedError

    started = time.perf_counter()
    if index.db_path.exists():
        try:  # no watcher here: bring the index up to date first, like the CLI
            index.sync()
        except IndexLockedError:
            pass  # another process writes it; search what is there
    hits = index.search(request.query, max_results=request.max_results,
                        min_score=request.min_score,
                        sources=list(request.sources) if request.sources else None)
    index.flush_recalls()
    return {"results": [h.to_dict() for h in hits],
            "provider": index.provider.id if index.provider else "none", "model": index.model,
            "mode": "hybrid" if index.provider is not None else "fts-only",
            "tookMs": round((time.perf_counter() - started) * 1000, 2)}


def _status_summary(st: dict[str, Any], health: str, problems: list[str], *, mode: str,
                    daemon: dict[str, Any] | None = None) -> dict[str, Any]:
    provider = st.get("provider") or {}
    files = st.get("files") or {}
    return {"health": health, "problems": problems, "mode": mode, "daemon": daemon,
            "agent": st.get("agent"), "workspace": st.get("workspace"),
            "provider": provider.get("id"), "model": provider.get("model"),
            "providerUnavailable": provider.get("unavailableReason"),
            "searchMode": st.get("searchMode"),
            "files": {"indexed": files.get("indexed", 0), "onDisk": files.get("onDisk", 0),
                      "stale": files.get("stale", 0)},
            "chunks": st.get("chunks", 0), "pendingVectors": st.get("pendingVectors", 0),
            "error": st.get("error") or st.get("indexError")}


def _text_result(payload: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    text = json.dumps(payload, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(text=text)],
                                structured_content=None if error else payload, is_error=error)


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def build_server(backend: Any) -> Server[Any]:
    """The SDK server; `backend` has `.agent` and `.run(request) -> dict` (Backend here, or
    the daemon's own, server/mcp_session.py)."""
    tools = [types.Tool(name=name, description=desc, input_schema=schema,
                        annotations=types.ToolAnnotations(read_only_hint=read_only,
                                                          destructive_hint=False,
                                                          open_world_hint=False))
             for name, (_, desc, schema, read_only) in TOOLS.items()]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOLS:
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"Unknown tool {params.name[:64]!r}: this server has "
                                   f"{', '.join(TOOLS)}")
        try:
            request = tool_request(params.name, params.arguments, backend.agent)
            payload = await anyio.to_thread.run_sync(backend.run, request,
                                                     abandon_on_cancel=True)
        except ProtocolError as exc:
            return _error_result(exc.message)
        except OpenmemdError as exc:
            return _error_result(str(exc))
        except Exception as exc:  # a bug: say so in one line, the traceback goes to stderr
            log.exception("mcp_tool_failed", tool=params.name)
            return _error_result(f"internal error in {params.name}: {type(exc).__name__}: {exc}")
        return _text_result(payload)

    return Server("openmemd", version=__version__, title="openmemd memory",
                  instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)


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
