"""The one seam every way in goes through: something that answers typed requests with typed
replies (protocol/replies.py).

Three things are handlers: the daemon's dispatcher (server/handlers.py), a `Client` of a
running daemon (it sends the request over the socket and reads the reply back into its
record), and the local handler that answers in this process over a `MemoryIndex`
(api/handler.py). The command line, MCP and agents hold a handler chosen by
`openmemd.api.route` and never ask again which one it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from openmemd.protocol.replies import (
    AddReply,
    ContextReply,
    DemoteReply,
    DreamReply,
    DreamsReply,
    GetReply,
    MemoryReply,
    PingReply,
    Reply,
    SearchReply,
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
    op_name,
)
from openmemd.protocol.status import DaemonStatus


class Handler(Protocol):
    def __call__(self, request: Request) -> Reply:
        """The request's reply (`replies.REPLIES` says which record); an `openmemd.errors`
        exception for an error reply."""
        ...

    def close(self) -> None: ...


class Answerer(Protocol):
    """What answers the requests itself (the daemon's dispatcher, the local handler): one
    method per op, named as the op, that `answer` calls."""

    def ping(self, request: PingRequest) -> PingReply: ...
    def status(self, request: StatusRequest) -> DaemonStatus: ...
    def search(self, request: SearchRequest) -> SearchReply: ...
    def get(self, request: GetRequest) -> GetReply: ...
    def sync(self, request: SyncRequest) -> SyncReply: ...
    def dream(self, request: DreamRequest) -> DreamReply: ...
    def add(self, request: AddRequest) -> AddReply: ...
    def context(self, request: ContextRequest) -> ContextReply: ...
    def memory(self, request: MemoryRequest) -> MemoryReply: ...
    def demote(self, request: DemoteRequest) -> DemoteReply: ...
    def undo(self, request: UndoRequest) -> DemoteReply: ...
    def dreams(self, request: DreamsRequest) -> DreamsReply: ...


def answer(answerer: Answerer, request: Request) -> Reply:
    """`request` answered by the method of its op (the ops are `requests.REQUESTS`)."""
    method: Callable[[Request], Reply] = getattr(answerer, op_name(request))
    return method(request)
