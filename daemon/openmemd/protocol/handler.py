"""The one seam every way in goes through: something that answers typed requests.

Three things are handlers: the daemon's dispatcher (server/handlers.py), a `Client` of a
running daemon (it sends the request over the socket), and the local handler that answers in
this process over a `MemoryIndex` (api/handler.py). The command line, MCP and agents hold a
handler chosen by `openmemd.api.route` and never ask again which one it is.
"""

from __future__ import annotations

from typing import Any, Protocol

from openmemd.protocol.requests import Request


class Handler(Protocol):
    def __call__(self, request: Request) -> dict[str, Any]:
        """The reply's fields (JSON-shaped, without "ok"); an `openmemd.errors` exception for
        an error reply."""
        ...

    def close(self) -> None: ...
