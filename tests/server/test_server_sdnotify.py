"""sd_notify over a real unix datagram socket (path and abstract namespace)."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

from openmemd.server.sdnotify import notify, watchdog_interval


def _listener(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(5)
    return sock


def test_ready_and_watchdog_on_a_path_socket() -> None:
    d = tempfile.mkdtemp(dir="/tmp", prefix="omn")
    path = os.path.join(d, "notify")
    sock = _listener(path)
    try:
        env = {"NOTIFY_SOCKET": path}
        assert notify("READY=1", env)
        assert sock.recv(4096) == b"READY=1"
        assert notify("WATCHDOG=1", env)
        assert sock.recv(4096) == b"WATCHDOG=1"
    finally:
        sock.close()
        Path(path).unlink()
        os.rmdir(d)


def test_abstract_namespace_socket() -> None:
    name = f"openmemd-test-{os.getpid()}"
    sock = _listener("\0" + name)
    try:
        assert notify("READY=1", {"NOTIFY_SOCKET": "@" + name})
        assert sock.recv(4096) == b"READY=1"
    finally:
        sock.close()


def test_no_socket_is_a_no_op() -> None:
    assert notify("READY=1", {}) is False
    assert notify("READY=1", {"NOTIFY_SOCKET": "relative"}) is False
    assert notify("READY=1", {"NOTIFY_SOCKET": "/tmp/does/not/exist"}) is False


def test_watchdog_interval() -> None:
    assert watchdog_interval({}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "2000000",
                              "WATCHDOG_PID": str(os.getpid())}) == 1.0
    assert watchdog_interval({"WATCHDOG_USEC": "x"}) is None
