"""A small client for the openmemd daemon (used by agents and by the command line).

    with Client() as c:
        hits = c.search("what did we decide about the release?")["results"]

One REQ socket with REQ_RELAXED + REQ_CORRELATE, so a timed-out request never leaves it stuck
and a late reply to an abandoned request is dropped. A Client may be shared between threads
(requests are serialised); for parallel requests use one Client per thread.

Errors: `DaemonNotRunning` (no daemon at the endpoint), `RequestTimeout`, and `RemoteError`
subclasses for error replies, which are also the matching `openmemd.errors` classes
(`except NotFoundError` catches a remote not_found as well as a local one).
"""

from __future__ import annotations

import errno
import json
import os
import socket
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

import zmq

from openmemd import paths
from openmemd.config import DEFAULT_AGENT
from openmemd.errors import (
    BadRequestError,
    ForbiddenError,
    NotFoundError,
    OpenmemdError,
    UnavailableError,
)
from openmemd.protocol import params
from openmemd.protocol.requests import (
    AddRequest,
    ContextRequest,
    DreamRequest,
    GetRequest,
    Request,
    SearchRequest,
    StatusRequest,
    SyncRequest,
    to_wire,
)

DEFAULT_TIMEOUT = 5.0
LONG_TIMEOUT = 600.0  # sync (wait) and dream can take minutes on a large workspace


class DaemonNotRunning(UnavailableError):
    """Nothing answers at the endpoint."""


class RequestTimeout(UnavailableError):
    """The daemon is there but did not reply in time."""


class RemoteError(OpenmemdError):
    """An error reply from the daemon."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class RemoteBadRequest(RemoteError, BadRequestError):
    pass


class RemoteNotFound(RemoteError, NotFoundError):
    pass


class RemoteForbidden(RemoteError, ForbiddenError):
    pass


class RemoteUnavailable(RemoteError, UnavailableError):
    pass


class RemoteInternal(RemoteError):
    pass


_BY_CODE: dict[str, type[RemoteError]] = {
    "bad_request": RemoteBadRequest, "not_found": RemoteNotFound, "forbidden": RemoteForbidden,
    "unavailable": RemoteUnavailable, "internal": RemoteInternal}


def default_client_endpoint() -> str:
    return os.environ.get("OPENMEMD_ENDPOINT") or paths.default_endpoint()


def _ipc_path(endpoint: str) -> Path | None:
    return Path(endpoint[len("ipc://"):]) if endpoint.startswith("ipc://") else None


def _ipc_refused(path: Path) -> bool:
    """True when nothing listens on the unix socket (a stale socket file left by a crash)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC) as probe:
        probe.settimeout(0.2)
        try:
            probe.connect(str(path))
        except OSError as exc:
            return exc.errno in (errno.ECONNREFUSED, errno.ENOENT, errno.ENOTSOCK)
    return False


class Client:
    def __init__(self, endpoint: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.endpoint = endpoint or default_client_endpoint()
        self.timeout = timeout
        self._ctx: zmq.Context[zmq.Socket[Any]] = zmq.Context.instance()
        self._sock: zmq.Socket[Any] | None = None
        self._lock = threading.Lock()

    # -- plumbing -------------------------------------------------------------------------
    def _socket(self) -> zmq.Socket[Any]:
        if self._sock is None:
            sock = self._ctx.socket(zmq.REQ)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.REQ_RELAXED, 1)
            sock.setsockopt(zmq.REQ_CORRELATE, 1)
            # Queue only to a completed connection: with no daemon, send fails fast instead of
            # queueing forever.
            sock.setsockopt(zmq.IMMEDIATE, 1)
            if self.endpoint.startswith("tcp://[") or self.endpoint.startswith("tcp://::"):
                sock.setsockopt(zmq.IPV6, 1)
            try:
                sock.connect(self.endpoint)
            except zmq.ZMQError as exc:  # a malformed endpoint: the caller's mistake
                sock.close(0)
                raise BadRequestError(f"invalid endpoint {self.endpoint!r}: {exc}") from None
            self._sock = sock
        return self._sock

    def _reset(self) -> None:
        if self._sock is not None:
            self._sock.close(0)
            self._sock = None

    def request(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request, return the `{"ok": true, ...}` reply, raise on error replies."""
        timeout = self.timeout if timeout is None else timeout
        ipc = _ipc_path(self.endpoint)
        if ipc is not None and not ipc.exists():
            raise DaemonNotRunning(f"openmemd is not running (no socket at {ipc})")
        try:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: escaped, so the daemon names the field
            body = json.dumps(payload, ensure_ascii=True).encode("ascii")
        with self._lock:
            sock = self._socket()
            deadline = time.monotonic() + timeout
            try:
                # IMMEDIATE: the socket is writable only once connected. A stale ipc socket
                # file (nobody listening) is detected quickly instead of waiting for the timeout.
                probed = ipc is None
                while not sock.poll(int(min(0.25, max(0.0, deadline - time.monotonic())) * 1000),
                                    zmq.POLLOUT):
                    if not probed:
                        probed = True
                        if ipc is not None and _ipc_refused(ipc):
                            raise DaemonNotRunning(f"openmemd is not running (stale socket {ipc})")
                    if time.monotonic() >= deadline:
                        raise self._no_reply(ipc, timeout, sent=False)
                sock.send(body, zmq.NOBLOCK)
                remaining = max(0.0, deadline - time.monotonic())
                if not sock.poll(int(remaining * 1000), zmq.POLLIN):
                    raise self._no_reply(ipc, timeout, sent=True)
                raw = sock.recv()
            except (DaemonNotRunning, RequestTimeout):
                self._reset()
                raise
            except zmq.ZMQError as exc:
                self._reset()
                raise UnavailableError(f"cannot talk to openmemd at {self.endpoint}: {exc}") \
                    from exc
        try:
            reply = json.loads(raw)
        except ValueError:
            raise RemoteInternal("internal", "the daemon sent a reply that is not JSON") from None
        if not isinstance(reply, dict):
            raise RemoteInternal("internal", "the daemon sent a reply that is not an object")
        if reply.get("ok") is True:
            return reply
        err = reply.get("error") or {}
        code = str(err.get("code", "internal"))
        raise _BY_CODE.get(code, RemoteInternal)(code, str(err.get("message", "unknown error")))

    def _no_reply(self, ipc: Path | None, timeout: float, *, sent: bool) -> OpenmemdError:
        if ipc is not None and _ipc_refused(ipc):
            return DaemonNotRunning(f"openmemd is not running (stale socket {ipc})")
        if not sent:
            return DaemonNotRunning(f"openmemd is not running at {self.endpoint} "
                                    f"(no connection within {timeout:g}s)")
        return RequestTimeout(f"openmemd at {self.endpoint} did not reply within {timeout:g}s")

    # -- operations -----------------------------------------------------------------------
    def send(self, request: Request, timeout: float | None = None) -> dict[str, Any]:
        """Send a typed request (`openmemd.protocol.requests`); the reply's fields (without
        "ok" and "id"), or an exception for an error reply. Long operations get a longer
        default timeout."""
        if timeout is None:
            timeout = self._timeout_for(request)
        reply = self.request(to_wire(request), timeout)
        return {k: v for k, v in reply.items() if k not in ("ok", "id")}

    def __call__(self, request: Request) -> dict[str, Any]:
        """A Client is a request handler (`openmemd.protocol.handler.Handler`), the daemon's."""
        return self.send(request)

    def _timeout_for(self, request: Request) -> float:
        if isinstance(request, StatusRequest) and request.deep:
            return max(self.timeout, 30.0)  # the probe search may load the model
        if isinstance(request, (DreamRequest, SyncRequest)) and (
                not isinstance(request, SyncRequest) or request.wait):
            return max(self.timeout, LONG_TIMEOUT)
        if isinstance(request, AddRequest):
            # The daemon indexes the note before replying (up to 30 s when its writer is busy).
            return max(self.timeout, 60.0)
        return self.timeout

    def ping(self, timeout: float | None = None) -> dict[str, Any]:
        try:
            return self.request({"op": "ping"}, timeout)
        except RequestTimeout as exc:
            raise DaemonNotRunning(str(exc)) from None

    def status(self, deep: bool = False, agent: str | None = None,
               timeout: float | None = None) -> dict[str, Any]:
        return self.send(StatusRequest(agent=agent, deep=deep), timeout)

    def search(self, query: str, max_results: int | None = None, min_score: float | None = None,
               sources: list[str] | None = None, explain: bool = False,
               agent: str | None = None, timeout: float | None = None) -> dict[str, Any]:
        return self.send(SearchRequest(query=query, agent=agent or DEFAULT_AGENT,
                                       max_results=max_results, min_score=min_score,
                                       sources=tuple(sources) if sources else None,
                                       explain=explain), timeout)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None,
            agent: str | None = None, timeout: float | None = None, *,
            namespace: str | None = None) -> dict[str, Any]:
        return self.send(GetRequest(path=path, agent=agent or DEFAULT_AGENT,
                                    from_line=from_line, lines=lines, namespace=namespace),
                         timeout)

    def sync(self, force: bool = False, wait: bool = True, agent: str | None = None,
             timeout: float | None = None) -> dict[str, Any]:
        return self.send(SyncRequest(agent=agent or DEFAULT_AGENT, force=force, wait=wait),
                         timeout)

    def dream(self, phase: str = "all", dry_run: bool = False, agent: str | None = None,
              timeout: float | None = None) -> dict[str, Any]:
        return self.send(DreamRequest(agent=agent or DEFAULT_AGENT, phase=phase,
                                      dry_run=dry_run), timeout)

    def add(self, text: str, target: str = "daily", agent: str | None = None,
            timeout: float | None = None) -> dict[str, Any]:
        """Append a note; the reply names the lines written (`citation`, `path#Lx-Ly`)."""
        return self.send(AddRequest(text=text, target=target, agent=agent or DEFAULT_AGENT),
                         timeout)

    def context(self, today: str | date | None = None, agent: str | None = None,
                timeout: float | None = None) -> dict[str, Any]:
        """The session's startup context (`text`: the block to put in a prompt); `today`
        (YYYY-MM-DD) replays a day."""
        return self.send(ContextRequest(agent=agent or DEFAULT_AGENT,
                                        today=None if today is None else params.today(today)),
                         timeout)

    # -- lifecycle ------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._reset()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def daemon_available(endpoint: str | None = None, timeout: float = 0.5) -> bool:
    """True when a daemon answers a ping at `endpoint` within `timeout` seconds."""
    try:
        with Client(endpoint, timeout=timeout) as client:
            client.ping()
        return True
    except OpenmemdError:
        return False
