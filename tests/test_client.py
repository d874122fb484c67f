"""The client against a real ZeroMQ server (stub handler): errors, timeouts, reuse."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openmemd.client import (
    Client,
    DaemonNotRunning,
    RemoteBadRequest,
    RemoteError,
    RemoteNotFound,
    RequestTimeout,
)
from openmemd.errors import BadRequestError, NotFoundError, UnavailableError
from openmemd.protocol.requests import (
    DreamRequest,
    GetRequest,
    PingRequest,
    Request,
    SearchRequest,
    StatusRequest,
    SyncRequest,
)
from openmemd.server.zmq_server import ZmqServer


class Said(dict[str, Any]):
    """A reply's fields, as the server encodes a reply record."""

    def to_json(self) -> dict[str, Any]:
        return dict(self)


class Recorder:
    def __init__(self) -> None:
        self.seen: list[Request] = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, req: Request) -> Said:
        self.seen.append(req)
        if isinstance(req, SearchRequest) and req.query == "hang":
            self.gate.wait(5)
            return Said(late=True)
        if isinstance(req, GetRequest):
            raise NotFoundError(f"{req.path}: no such file")
        return Said(kind=type(req).__name__)



@pytest.fixture
def served(sockdir: Path) -> Iterator[tuple[str, Recorder]]:
    rec = Recorder()
    srv = ZmqServer(f"ipc://{sockdir}/c.sock", rec, workers=2)
    srv.start()
    yield srv.endpoint.url, rec
    rec.gate.set()
    srv.stop(timeout=3)


def test_requests_carry_the_right_fields(served: tuple[str, Recorder]) -> None:
    url, rec = served
    with Client(url) as c:
        assert c.ping()["kind"] == "PingRequest"
        c.status(deep=True, agent="main")
        c.search("q", max_results=3, min_score=0.1, sources=["sessions"], explain=True,
                 agent="main")
        c.sync(force=True, wait=False)
        c.dream(phase="deep", dry_run=True)
    assert rec.seen == [
        PingRequest(), StatusRequest(agent="main", deep=True),
        SearchRequest(query="q", max_results=3, min_score=0.1, sources=("sessions",),
                      explain=True),
        SyncRequest(force=True, wait=False), DreamRequest(phase="deep", dry_run=True)]


def test_error_replies_are_typed(served: tuple[str, Recorder]) -> None:
    url, _ = served
    with Client(url) as c:
        with pytest.raises(RemoteNotFound) as info:
            c.get("missing.md")
        assert isinstance(info.value, NotFoundError) and info.value.code == "not_found"
        with pytest.raises(RemoteBadRequest) as bad:
            c.search("x", max_results=0)
        assert isinstance(bad.value, BadRequestError) and isinstance(bad.value, RemoteError)
        assert c.ping()["ok"] is True  # still usable


def test_timeout_then_reuse(served: tuple[str, Recorder]) -> None:
    url, rec = served
    rec.gate.clear()
    c = Client(url, timeout=0.3)
    try:
        with pytest.raises(RequestTimeout):
            c.search("hang")
        rec.gate.set()
        # the late reply to the abandoned request must not be taken for this one
        assert c.ping()["kind"] == "PingRequest"
        assert c.search("next")["kind"] == "SearchRequest"
    finally:
        c.close()


def test_no_socket_file_is_not_running(sockdir: Path) -> None:
    c = Client(f"ipc://{sockdir}/none.sock", timeout=30)
    started = time.monotonic()
    with pytest.raises(DaemonNotRunning):
        c.ping()
    assert time.monotonic() - started < 15  # told at once, not after the 30 s timeout
    assert isinstance(DaemonNotRunning("x"), UnavailableError)


def test_stale_socket_file_is_not_running(sockdir: Path) -> None:
    path = sockdir / "stale.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.close()  # the file stays, nobody listens: what a crashed daemon leaves
    assert path.exists()
    started = time.monotonic()
    with pytest.raises(DaemonNotRunning, match="stale"):
        Client(f"ipc://{path}", timeout=30).status()
    assert time.monotonic() - started < 15  # told at once, not after the 30 s timeout


def test_client_shared_between_threads(served: tuple[str, Recorder]) -> None:
    url, _ = served
    errors: list[BaseException] = []
    with Client(url) as c:
        def work() -> None:
            try:
                for _ in range(20):
                    assert c.ping()["ok"]
            except BaseException as exc:  # pragma: no cover
                errors.append(exc)
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
    assert not errors


def test_malformed_endpoint_is_a_bad_request_not_a_zmq_error() -> None:
    with Client("bogus://x", timeout=1) as c, pytest.raises(BadRequestError, match="bogus://x"):
        c.ping()


def test_lone_surrogate_in_a_request_reaches_the_daemon_and_is_refused_by_field(
        sockdir: Path) -> None:
    rec = Recorder()
    srv = ZmqServer(f"ipc://{sockdir}/s.sock", rec, workers=1)
    srv.start()
    try:
        with Client(srv.endpoint.url, timeout=5) as c:
            with pytest.raises(RemoteBadRequest, match="'query'"):
                c.search("bad \ud800 query")
            assert c.ping()["kind"] == "PingRequest"  # the client socket is still usable
    finally:
        srv.stop(timeout=3)
