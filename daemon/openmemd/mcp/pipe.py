"""`openmemd mcp` when a daemon serves the workspace: a byte pipe to the daemon's MCP sessions.

The MCP SDK costs about 0.5–0.7 s of CPU to import, too slow for an MCP host waiting for
`initialize`. A running daemon has it imported already (in the background, after it is ready)
and serves MCP sessions on a unix socket it names in its ping reply (`mcp`). This process then
only copies bytes, stdin -> socket and socket -> stdout: newline-delimited JSON-RPC exactly as
on stdio, handled by the SDK in the daemon. It imports no SDK, so `initialize` is answered in a
fraction of a second.

The connection's first line, before any JSON-RPC, names the agent (`{"openmemdAgent": "main"}`);
the daemon answers one line, `{"openmemd": "ok"}` or `{"openmemdError": "..."}`, before the
session starts. Anything but "ok" (and no daemon, or one still loading the SDK or without it)
returns None here: the caller serves in this process with the SDK instead.

Exit: stdin closed -> the socket's write side is shut, replies still coming are copied out, 0.
The daemon going away mid-session -> one line on stderr and 0 (the host restarts the server).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import sys
import threading
import time
from typing import Any

from openmemd.config import Settings
from openmemd.protocol.replies import DaemonPingReply, expect
from openmemd.protocol.requests import PingRequest

HANDSHAKE_TIMEOUT = 5.0  # connect + the daemon's one-line answer
DRAIN_SECONDS = 30.0  # after stdin closed, wait this long at most for the last replies
MAX_LINE = 4096
CHUNK = 65536
GONE = ("openmemd mcp: the openmemd daemon went away; this MCP session ended (your agent host "
        "restarts the server)")


def connect(settings: Settings, args: argparse.Namespace) -> tuple[socket.socket, bytes] | None:
    """(a connected session socket, bytes already read past the handshake), or None when no
    daemon serves this agent and workspace over MCP."""
    from openmemd.api.route import daemon_for
    from openmemd.errors import OpenmemdError

    try:
        client = daemon_for(settings, args.agent, args.workspace, timeout=HANDSHAKE_TIMEOUT)
        if client is None:
            return None
        with client:
            path = expect(client(PingRequest()), DaemonPingReply).mcp
    except OpenmemdError:
        return None
    if not isinstance(path, str) or not path:
        return None  # the daemon is still importing the SDK, or does not have it
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(HANDSHAKE_TIMEOUT)
        sock.connect(path)
        sock.sendall(json.dumps({"openmemdAgent": args.agent}).encode() + b"\n")
        answer, rest = _read_line(sock)
        reply = json.loads(answer)
        if not isinstance(reply, dict) or reply.get("openmemd") != "ok":
            error = reply.get("openmemdError") if isinstance(reply, dict) else None
            print(f"openmemd mcp: the daemon refused the session ({error or answer[:200]!r}); "
                  "serving in this process", file=sys.stderr)
            sock.close()
            return None
        sock.settimeout(None)
        return sock, rest
    except (OSError, ValueError) as exc:
        print(f"openmemd mcp: cannot reach the daemon's MCP socket {path} ({exc}); serving in "
              "this process", file=sys.stderr)
        sock.close()
        return None


def _read_line(sock: socket.socket) -> tuple[str, bytes]:
    data = b""
    while b"\n" not in data:
        chunk = sock.recv(MAX_LINE)
        if not chunk:
            raise ValueError("connection closed before the daemon answered")
        data += chunk
        if len(data) > MAX_LINE:
            raise ValueError("the daemon's answer is too long")
    line, _, rest = data.partition(b"\n")
    return line.decode("utf-8", "replace"), rest


def relay(sock: socket.socket, first: bytes = b"", *, stdin: int = 0, stdout: int = 1) -> int:
    """Copy stdin -> sock and sock -> stdout until the daemon closes the session; 0."""
    stdin_closed = threading.Event()
    closed_at: list[float] = []

    def upstream() -> None:
        try:
            while True:
                data = os.read(stdin, CHUNK)
                if not data:
                    break
                sock.sendall(data)
        except OSError:
            pass  # the daemon is gone: the main loop sees it too
        finally:
            closed_at.append(time.monotonic())
            stdin_closed.set()
            try:
                sock.shutdown(socket.SHUT_WR)  # the daemon's session sees end of input
            except OSError:
                pass

    # A daemon thread: when the daemon goes away, this one may still block reading stdin.
    threading.Thread(target=upstream, name="openmemd-mcp-stdin", daemon=True).start()
    try:
        if first and not _write_all(stdout, first):
            return 0
        while True:
            if stdin_closed.is_set() and time.monotonic() - closed_at[0] > DRAIN_SECONDS:
                break  # the daemon never closed the session: leave anyway
            ready, _, _ = select.select([sock], [], [], 1.0)
            if not ready:
                continue
            try:
                data = sock.recv(CHUNK)
            except OSError:
                data = b""
            if not data:
                break
            if not _write_all(stdout, data):
                return 0  # the host closed our stdout: it is gone
    finally:
        sock.close()
    if not stdin_closed.wait(0.2):
        print(GONE, file=sys.stderr)
    return 0


def _write_all(fd: int, data: bytes) -> bool:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        return False
    return True


def serve(settings: Settings, args: argparse.Namespace) -> int | None:
    """Serve through the daemon: the exit code, or None when no daemon does MCP for us."""
    found: Any = connect(settings, args)
    if found is None:
        return None
    return relay(*found)
