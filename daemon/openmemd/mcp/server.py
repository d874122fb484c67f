"""`openmemd mcp` in its own process: the memory's MCP tools (mcp/tools.py) over stdio.

Where it runs: a daemon that has the SDK hosts the sessions itself (server/mcp_host.py and
server/mcp_session.py: the same tools on the daemon's Dispatcher, the SDK's stdio transport on
the connection), and `openmemd mcp` is only a byte pipe to it (mcp/pipe.py),
which starts in a fraction of a second. Otherwise this module serves stdio in the `openmemd
mcp` process (`serve`), paying the SDK's import (about 0.5 s of CPU) before `initialize`, and
preparing the first search (the index, the embedding model) in a background thread while the
host initializes (`SessionRoute.warm`). Either way the transport reads through mcp/lines.py,
which answers the lines it cannot take.

In process, one memory whichever way in (`openmemd.api.route.SessionRoute`): when a daemon
serves this agent and workspace, every call is a request to its socket (its searches count as
recalls for dreaming, its watcher indexes new notes); otherwise calls run in this process
exactly like the CLI. Nothing below `api` (numpy, SQLite, the model) nor pyzmq is imported
by importing this module: `serve` starts that once the SDK is imported.
"""

from __future__ import annotations

import argparse
import sys

import anyio
from anyio.streams.file import FileReadStream

from openmemd.config import Settings
from openmemd.log import get_logger
from openmemd.mcp.lines import session_streams
from openmemd.mcp.tools import build_server

log = get_logger(__name__)

DAEMON_TIMEOUT = 30.0  # per request: a host must never hang on a stuck daemon


def serve(settings: Settings, args: argparse.Namespace) -> int:
    """Serve until the host closes stdin; 0 then."""
    from openmemd.api.route import SessionRoute

    route = SessionRoute(settings, args.agent, args.workspace, daemon_timeout=DAEMON_TIMEOUT,
                         notice=lambda why: log.warning("mcp_search_index_not_current",
                                                        reason=why))
    # The index opens and the model loads in the background while the host initializes and
    # decides to call a tool, so the first search finds them ready. Not before the SDK's import
    # above: that is Python work under the GIL, a thread beside it gained nothing measurable
    # (bench/mcp_bench.py), and two threads importing module trees at once risk the import
    # deadlocks of issue 25.
    route.warm()
    server = build_server(route, args.agent)

    async def main() -> None:
        # Unbuffered: a read returns what the host has written so far, not 64 KiB or EOF.
        with open(sys.stdin.fileno(), "rb", buffering=0, closefd=False) as stdin:
            async with session_streams(FileReadStream(stdin)) as (read_stream, write_stream):
                await server.run(read_stream, write_stream,
                                 server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        route.close()
    return 0
