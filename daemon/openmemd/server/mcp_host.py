"""The daemon hosts `openmemd mcp` sessions, so the command itself starts in a fraction of a second.

Importing the MCP SDK costs about 0.5–0.7 s of CPU, more than an MCP host waits for `initialize`.
The daemon imports it in a background thread once it is ready (never delaying READY or the
first searches' socket), runs one session with itself (so concurrent first sessions import
nothing), then listens on a unix socket beside its ZeroMQ one (0600 in the same
0700 directory) and names it in its ping reply (`mcp`; null while loading or without the SDK).
`openmemd mcp` (mcp/pipe.py) pipes its stdin/stdout to that socket.

One connection is one SDK session (mcp_session.serve_socket: the SDK's own stdio transport on the
connection's streams, an anyio loop in its own thread). Its first line names the agent
(`{"openmemdAgent": "main"}`); the answer is `{"openmemd": "ok"}`, or `{"openmemdError":
"..."}` and the connection is closed. The session's tools call the daemon's Dispatcher, exactly
as socket requests do (searches count as recalls).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openmemd import paths
from openmemd.log import get_logger
from openmemd.protocol.endpoint import MAX_IPC_PATH, Endpoint, lock_path, prepare_private_dir
from openmemd.protocol.handler import Handler

log = get_logger(__name__)

HANDSHAKE_TIMEOUT = 10.0
MAX_PREAMBLE = 4096
MAX_SESSIONS = 64  # each is a thread (plus the SDK's worker threads while a tool runs)


def socket_path(endpoint: Endpoint) -> Path:
    """One MCP socket per daemon: beside its ipc socket (or its lock, for tcp)."""
    if endpoint.ipc_path is not None:
        path = endpoint.ipc_path.with_name(endpoint.ipc_path.name + ".mcp")
    else:
        lock = lock_path(endpoint)
        path = lock.with_name(lock.name.removesuffix(".lock") + ".mcp.sock")
    if len(os.fsencode(str(path))) > MAX_IPC_PATH:
        digest = hashlib.sha1(endpoint.url.encode()).hexdigest()[:12]
        path = paths.runtime_dir() / f"openmemd-mcp-{digest}.sock"
    return path


class McpHost:
    def __init__(self, path: Path, dispatcher: Handler, agents: Mapping[str, object]) -> None:
        self.path = path
        self._dispatcher = dispatcher
        self._agents = agents
        self._listener: socket.socket | None = None
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._serving = False
        self._thread: threading.Thread | None = None

    def advertised(self) -> str | None:
        """The socket path for the ping reply, once sessions can be served."""
        return str(self.path) if self._serving and not self._stopping.is_set() else None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="openmemd-mcp", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        listener = self._listener
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() (Linux)
            with contextlib.suppress(OSError):
                listener.close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:  # their sessions read end of input and finish
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if (self._thread is not None and self._serving
                and self._thread is not threading.current_thread()):
            self._thread.join(2.0)  # (one still importing the SDK is left to the exit)
        if self._serving:
            with contextlib.suppress(OSError):
                self.path.unlink()

    # -- the listener thread ----------------------------------------------------------------
    def _run(self) -> None:
        try:
            from openmemd.server import mcp_session
        except ImportError as exc:
            log.info("mcp_sessions_unavailable", reason=f"the MCP SDK is not installed ({exc})")
            return
        except Exception:
            log.exception("mcp_sdk_import_failed")
            return
        try:
            mcp_session.warm_up(self._dispatcher, next(iter(self._agents)))
        except Exception:  # sessions may still work; the first ones import what they need
            log.exception("mcp_warm_up_failed")
        if self._stopping.is_set():
            return
        try:
            self._listener = self._bind()
        except OSError as exc:
            log.error("mcp_socket_bind_failed", path=str(self.path), error=str(exc))
            return
        self._serving = True
        if self._stopping.is_set():  # stop() came while binding
            self.stop()
            return
        log.info("mcp_sessions_ready", path=str(self.path))
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if not self._stopping.is_set():
                    log.exception("mcp_accept_failed")
                return
            threading.Thread(target=self._session, args=(conn, mcp_session),
                             name="openmemd-mcp-session", daemon=True).start()

    def _bind(self) -> socket.socket:
        prepare_private_dir(self.path.parent)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a killed daemon's leftover: we hold the endpoint's pid lock
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o077)  # 0600 from its first moment
        try:
            sock.bind(str(self.path))
        except OSError:
            sock.close()
            raise
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        sock.listen(16)
        sock.settimeout(1.0)  # see the stop flag
        return sock

    # -- one session per connection -----------------------------------------------------------
    def _session(self, conn: socket.socket, mcp_session: Any) -> None:
        with self._lock:
            full = len(self._conns) >= MAX_SESSIONS
            if not full:
                self._conns.add(conn)
        try:
            if full:
                _refuse(conn, f"too many MCP sessions ({MAX_SESSIONS}); close some")
                return
            conn.settimeout(HANDSHAKE_TIMEOUT)
            agent = self._handshake(conn, _first_line(conn))
            if agent is None:
                return
            conn.settimeout(None)
            conn.sendall(b'{"openmemd": "ok"}\n')
            log.info("mcp_session_started", agent=agent)
            mcp_session.serve_socket(self._dispatcher, agent, conn)
            log.info("mcp_session_ended", agent=agent)
        except OSError as exc:
            log.info("mcp_session_ended", error=str(exc))
        except Exception:
            log.exception("mcp_session_failed")
        finally:
            with self._lock:
                self._conns.discard(conn)
            with contextlib.suppress(OSError):
                conn.close()

    def _handshake(self, conn: socket.socket, line: bytes) -> str | None:
        """The agent the first line names, or None (refused, with the reason)."""
        try:
            agent = json.loads(line).get("openmemdAgent")
        except (ValueError, AttributeError):
            agent = None
        if not isinstance(agent, str):
            _refuse(conn, 'the first line must be {"openmemdAgent": "<agent id>"}')
            return None
        if agent not in self._agents:
            _refuse(conn, f"unknown agent {agent[:64]!r}; this daemon serves "
                          f"{', '.join(self._agents)}")
            return None
        return agent


def _first_line(conn: socket.socket) -> bytes:
    """The first line, consuming nothing after it (what follows is the session's). Byte by
    byte: it is a few dozen bytes, once per session."""
    line = bytearray()
    while len(line) < MAX_PREAMBLE:
        byte = conn.recv(1)
        if not byte:
            break
        line += byte
        if byte == b"\n":
            break
    return bytes(line)


def _refuse(conn: socket.socket, message: str) -> None:
    log.info("mcp_session_refused", reason=message)
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps({"openmemdError": message}).encode() + b"\n")
