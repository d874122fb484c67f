"""One MCP session the daemon hosts (server/mcp_host.py): the MCP tools on the daemon's
own Dispatcher, over the SDK's stdio transport on the session's socket.

Imports the MCP SDK: only mcp_host's background thread imports this module, once the daemon
is ready.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import UNIXSocketStream

from openmemd import __version__
from openmemd.log import get_logger
from openmemd.mcp.lines import session_streams
from openmemd.mcp.tools import build_server
from openmemd.protocol.handler import Handler

log = get_logger(__name__)


_WARM_UP = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": types.LATEST_PROTOCOL_VERSION, "capabilities": {},
    "clientInfo": {"name": "openmemd-warm-up", "version": __version__}}}).encode() + b"\n"


class _SocketWriter:
    """A connected socket as the SDK's stdio transport writes its stdout (`await
    stdout.write(text)`, `await stdout.flush()`), on the event loop itself: no thread hop per
    message as with `anyio.wrap_file`."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def write(self, text: str) -> None:
        try:
            await self._stream.send(text.encode("utf-8"))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the client is gone: reading ends the session right after

    async def flush(self) -> None:
        return None


def serve_socket(dispatcher: Handler, agent: str, sock: Any) -> None:
    """One MCP session over a connected socket, until its input ends: the SDK's stdio
    transport on the socket's streams (newline-delimited JSON-RPC, exactly as on stdio),
    reading through mcp/lines.py as `openmemd mcp` in process does."""
    server = build_server(dispatcher, agent)

    async def main() -> None:
        stream = await UNIXSocketStream.from_socket(sock)
        async with stream, session_streams(stream, _SocketWriter(stream)) as (read_stream,
                                                                              write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


def warm_up(dispatcher: Handler, agent: str) -> None:
    """One session with ourselves, before the first real one. A session's first run imports
    more (anyio's event loop backend, its socket streams); several sessions starting at once
    would import them concurrently, and a thread could meet a partially initialised module
    (issue 25). `initialize` alone calls no tool."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        theirs.sendall(_WARM_UP)
        theirs.shutdown(socket.SHUT_WR)  # the session ends once it has answered
        serve_socket(dispatcher, agent, ours)
