"""A small client for the openmemd daemon (used by agents and by the command line).

    with Client() as c:
        hits = c.search("what did we decide about the release?")["results"]

The named operations (`search`, `get`, ...) return the reply's JSON, for scripts and agents;
`send` (and calling the Client, a request handler) reads it back into the reply's record.

One connection speaking ZeroMQ's wire protocol (`openmemd.protocol.zmtp`: no pyzmq to import),
one request at a time on it. A request that times out drops the connection, so its late reply
is never taken for the next one's; a connection the daemon closed (it stopped or restarted) is
replaced before the next request. A Client may be shared between threads (requests are
serialised); for parallel requests use one Client per thread.

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
from openmemd.protocol.replies import Reply, read_reply
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
from openmemd.protocol.zmtp import Connection, ZmtpError

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


def listening(endpoint: str) -> bool:
    """Whether a process accepts connections at this ipc endpoint (a daemon, perhaps too busy
    to answer yet); False for a stale socket file, no file, or tcp (not told apart here)."""
    ipc = _ipc_path(endpoint)
    return ipc is not None and ipc.exists() and not _ipc_refused(ipc)


class Client:
    def __init__(self, endpoint: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.endpoint = endpoint or default_client_endpoint()
        self.timeout = timeout
        self._conn: Connection | None = None
        self._lock = threading.Lock()

    # -- plumbing -------------------------------------------------------------------------
    def _connection(self, ipc: Path | None, deadline: float, timeout: float) -> Connection:
        if self._conn is not None and not self._conn.alive():
            self._reset()
        while self._conn is None:
            try:
                self._conn = Connection(self.endpoint, deadline)
            except ValueError as exc:  # a malformed endpoint: the caller's mistake
                raise BadRequestError(f"invalid endpoint {self.endpoint!r}: {exc}") from None
            except (ConnectionRefusedError, FileNotFoundError, NotADirectoryError) as exc:
                if ipc is not None:  # the file is there, nobody listens: a crash left it
                    raise DaemonNotRunning(f"openmemd is not running (stale socket {ipc})") \
                        from exc
                if time.monotonic() + 0.05 >= deadline:  # tcp: it may be starting, retry
                    raise self._no_reply(ipc, timeout, sent=False) from None
                time.sleep(0.05)
            except TimeoutError:
                raise self._no_reply(ipc, timeout, sent=False) from None
        return self._conn

    def _reset(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

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
            deadline = time.monotonic() + timeout
            try:
                raw = self._connection(ipc, deadline, timeout).request(body, deadline)
            except TimeoutError:
                self._reset()
                raise self._no_reply(ipc, timeout, sent=True) from None
            except ConnectionError as exc:  # it closed the connection: stopped, or crashed
                self._reset()
                if ipc is not None and _ipc_refused(ipc):
                    raise DaemonNotRunning(f"openmemd stopped before replying ({exc})") \
                        from None
                raise UnavailableError(f"openmemd at {self.endpoint} closed the connection "
                                       "without a reply") from None
            except (ZmtpError, OSError) as exc:
                self._reset()
                raise UnavailableError(f"cannot talk to openmemd at {self.endpoint}: {exc}") \
                    from exc
            except BaseException:
                self._reset()
                raise
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
    def send(self, request: Request, timeout: float | None = None) -> Reply:
        """Send a typed request (`openmemd.protocol.requests`); its reply read back into its
        record (`openmemd.protocol.replies`), or an exception for an error reply."""
        return read_reply(request, self.fields(request, timeout))

    def __call__(self, request: Request) -> Reply:
        """A Client is a request handler (`openmemd.protocol.handler.Handler`), the daemon's."""
        return self.send(request)

    def fields(self, request: Request, timeout: float | None = None) -> dict[str, Any]:
        """The reply's JSON fields (without "ok" and "id"), as scripts and agents read them.
        Long operations get a longer default timeout."""
        if timeout is None:
            timeout = self._timeout_for(request)
        reply = self.request(to_wire(request), timeout)
        return {k: v for k, v in reply.items() if k not in ("ok", "id")}

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
        return self.fields(StatusRequest(agent=agent, deep=deep), timeout)

    def search(self, query: str, max_results: int | None = None, min_score: float | None = None,
               sources: list[str] | None = None, explain: bool = False,
               agent: str | None = None, timeout: float | None = None) -> dict[str, Any]:
        return self.fields(SearchRequest(query=query, agent=agent or DEFAULT_AGENT,
                                       max_results=max_results, min_score=min_score,
                                       sources=tuple(sources) if sources else None,
                                       explain=explain), timeout)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None,
            agent: str | None = None, timeout: float | None = None, *,
            namespace: str | None = None) -> dict[str, Any]:
        return self.fields(GetRequest(path=path, agent=agent or DEFAULT_AGENT,
                                    from_line=from_line, lines=lines, namespace=namespace),
                         timeout)

    def sync(self, force: bool = False, wait: bool = True, agent: str | None = None,
             timeout: float | None = None) -> dict[str, Any]:
        return self.fields(SyncRequest(agent=agent or DEFAULT_AGENT, force=force, wait=wait),
                         timeout)

    def dream(self, phase: str = "all", dry_run: bool = False, agent: str | None = None,
              timeout: float | None = None) -> dict[str, Any]:
        return self.fields(DreamRequest(agent=agent or DEFAULT_AGENT, phase=phase,
                                      dry_run=dry_run), timeout)

    def add(self, text: str, target: str = "daily", agent: str | None = None,
            timeout: float | None = None) -> dict[str, Any]:
        """Append a note; the reply names the lines written (`citation`, `path#Lx-Ly`)."""
        return self.fields(AddRequest(text=text, target=target, agent=agent or DEFAULT_AGENT),
                         timeout)

    def context(self, today: str | date | None = None, agent: str | None = None,
                timeout: float | None = None) -> dict[str, Any]:
        """The session's startup context (`text`: the block to put in a prompt); `today`
        (YYYY-MM-DD) replays a day."""
        return self.fields(ContextRequest(agent=agent or DEFAULT_AGENT,
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

