"""A ZeroMQ REQ peer in plain Python, for the client: ZMTP 3.0 with the NULL mechanism over a
unix or TCP stream socket, one request and its reply at a time, to the daemon's ROUTER socket.

Why not pyzmq here: importing it costs a one-shot command (`openmemd search`) ~30 ms of CPU
(libzmq and its constants' enums), more than everything else the command does, for a request
the daemon answers in a few milliseconds. The daemon stays on pyzmq (a ROUTER, many peers).
Wire format: ZMTP 3.0, https://rfc.zeromq.org/spec/23/ -- a 64-byte greeting each way, a READY
command each way naming the socket types, then frames: a flags byte (MORE, LONG, COMMAND), a
1- or 8-byte size, the bytes. A REQ peer sends an empty delimiter frame, then the body.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

_MORE, _LONG, _COMMAND = 0x01, 0x02, 0x04
# signature, version 3.0, mechanism NULL (20 bytes, zero-padded), as-server 0, filler
GREETING = (b"\xff" + b"\0" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\0") + b"\0"
            + b"\0" * 31)


class ZmtpError(OSError):
    """The peer is not a ZeroMQ 3 peer, refused the handshake, or broke the framing."""


def _frame(body: bytes, flags: int = 0) -> bytes:
    if len(body) > 255:
        return bytes([flags | _LONG]) + len(body).to_bytes(8, "big") + body
    return bytes([flags, len(body)]) + body


def _ready(socket_type: bytes) -> bytes:
    name = b"Socket-Type"
    return _frame(b"\x05READY" + bytes([len(name)]) + name
                  + len(socket_type).to_bytes(4, "big") + socket_type, _COMMAND)


def address(endpoint: str) -> str | tuple[str, int]:
    """The socket path of `ipc://PATH`, (host, port) of `tcp://HOST:PORT`; ValueError
    otherwise."""
    if endpoint.startswith("ipc://") and len(endpoint) > len("ipc://"):
        return str(Path(endpoint[len("ipc://"):]).expanduser())
    if endpoint.startswith("tcp://"):
        host, sep, port = endpoint[len("tcp://"):].rpartition(":")
        if sep and host and port.isdigit():
            return host.removeprefix("[").removesuffix("]"), int(port)
    raise ValueError("expected ipc://PATH or tcp://HOST:PORT")


class Connection:
    """One REQ connection. Raises OSError: ConnectionRefusedError or FileNotFoundError when
    nothing listens, TimeoutError past the deadline, ConnectionError when the peer closes,
    ZmtpError for a peer that does not speak ZMTP 3."""

    def __init__(self, endpoint: str, deadline: float) -> None:
        addr = address(endpoint)
        if isinstance(addr, str):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
            try:
                sock.settimeout(_left(deadline))
                sock.connect(addr)
            except BaseException:
                sock.close()
                raise
        else:
            sock = socket.create_connection(addr, timeout=_left(deadline))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        try:
            sock.sendall(GREETING + _ready(b"REQ"))
            peer = self._read(64, deadline)
            if peer[0] != 0xFF or not peer[9] & 1 or peer[10] < 3:
                raise ZmtpError("the peer does not speak ZeroMQ 3 (ZMTP)")
            if peer[12:32].rstrip(b"\0") != b"NULL":
                raise ZmtpError("the peer wants a security mechanism other than NULL")
            self._recv_frames(deadline)  # its READY
        except BaseException:
            sock.close()
            raise

    def request(self, body: bytes, deadline: float) -> bytes:
        """Send `body` (after the empty delimiter) and return the reply's last frame."""
        self._sock.settimeout(_left(deadline))
        self._sock.sendall(_frame(b"", _MORE) + _frame(body))
        frames = self._recv_frames(deadline)
        if len(frames) < 2 or frames[0]:
            raise ZmtpError("the reply has no empty delimiter frame")
        return frames[-1]

    def alive(self) -> bool:
        """False when the peer has closed the connection since the last reply (a daemon that
        stopped or restarted): a request sent on it would be lost."""
        self._sock.settimeout(0)
        try:
            return self._sock.recv(1, socket.MSG_PEEK) != b""  # nothing is due: EOF or data
        except BlockingIOError:
            return True
        except OSError:
            return False

    def close(self) -> None:
        self._sock.close()

    def _recv_frames(self, deadline: float) -> list[bytes]:
        """The next message's frames, or a READY command's (one frame); ERROR raises."""
        frames: list[bytes] = []
        while True:
            flags = self._read(1, deadline)[0]
            size = int.from_bytes(self._read(8 if flags & _LONG else 1, deadline), "big")
            body = self._read(size, deadline)
            if flags & _COMMAND:
                name = body[1:1 + body[0]] if body else b""
                if name == b"ERROR":
                    reason = body[len(name) + 2:].decode("utf-8", "replace")
                    raise ZmtpError(f"the peer refused the connection: {reason}")
                if name == b"READY":
                    return [body]
                continue  # PING and other commands of later ZMTP versions: not for us
            frames.append(body)
            if not flags & _MORE:
                return frames

    def _read(self, n: int, deadline: float) -> bytes:
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            self._sock.settimeout(_left(deadline))
            read = self._sock.recv_into(view[got:])
            if not read:
                raise ConnectionError("the peer closed the connection")
            got += read
        return bytes(buf)


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    return left
