"""The ZeroMQ server on real ipc sockets, with a stub handler (our own code, not a service)."""

from __future__ import annotations

import json
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from helpers import wait_for
from openmemd.errors import ForbiddenError, NotFoundError
from openmemd.protocol.endpoint import EndpointError, lock_path, parse_endpoint
from openmemd.protocol.requests import GetRequest, PingRequest, Request, SearchRequest
from openmemd.server import workers
from openmemd.server.zmq_server import Handler, ServerError, ZmqServer, split_envelope


class Said(dict[str, Any]):
    """A reply's fields, as the server encodes a reply record."""

    def to_json(self) -> dict[str, Any]:
        return dict(self)


class Stub:
    """Answers like the real dispatcher would, with hooks for slow and failing requests."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.release.set()

    def __call__(self, req: Request) -> Said:
        if isinstance(req, PingRequest):
            return Said(pong=True)
        if isinstance(req, SearchRequest):
            if req.query == "slow":
                self.release.wait(10)
            if req.query == "crash":
                raise RuntimeError("handler bug")
            if req.query == "nan":
                return Said(score=float("nan"))
            return Said(echo=req.query, max=req.max_results)
        if isinstance(req, GetRequest):
            if req.path == "secret":
                raise ForbiddenError("outside the workspace")
            raise NotFoundError(f"{req.path}: no such file")
        return Said(type=type(req).__name__)


_: Handler = Stub()  # mypy: the stub is a complete request handler


@pytest.fixture
def server(sockdir: Path) -> Iterator[tuple[ZmqServer, Stub]]:
    stub = Stub()
    srv = ZmqServer(f"ipc://{sockdir}/s.sock", stub, workers=4, max_message_bytes=4096)
    srv.start()
    yield srv, stub
    stub.release.set()
    srv.stop(timeout=3)


def req_socket(srv: ZmqServer, kind: int = zmq.REQ) -> zmq.Socket[bytes]:
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(kind)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 5000)
    sock.connect(srv.endpoint.url)
    return sock


def ask(sock: zmq.Socket[bytes], body: bytes | dict[str, Any]) -> dict[str, Any]:
    sock.send(body if isinstance(body, bytes) else json.dumps(body).encode())
    reply: dict[str, Any] = json.loads(sock.recv())
    return reply


def test_socket_file_is_private_and_removed(server: tuple[ZmqServer, Stub],
                                            sockdir: Path) -> None:
    srv, _ = server
    path = sockdir / "s.sock"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    srv.stop(timeout=3)
    assert not path.exists()


def test_replies_and_errors(server: tuple[ZmqServer, Stub]) -> None:
    srv, _ = server
    sock = req_socket(srv)
    try:
        assert ask(sock, {"op": "ping"}) == {"ok": True, "pong": True}
        assert ask(sock, {"op": "search", "query": "hi", "maxResults": 3, "id": 7}) == {
            "ok": True, "echo": "hi", "max": 3, "id": 7}
        err = ask(sock, {"op": "get", "path": "nope"})
        assert err == {"ok": False, "error": {"code": "not_found", "message": "nope: no such file"}}
        assert ask(sock, {"op": "get", "path": "secret"})["error"]["code"] == "forbidden"
        crash = ask(sock, {"op": "search", "query": "crash"})
        assert crash["error"]["code"] == "internal" and "handler bug" in crash["error"]["message"]
        assert ask(sock, {"op": "search", "query": "nan"})["error"]["code"] == "internal"
        for body in (b"\xff", b"{", b"[]", b"", json.dumps({"op": "x"}).encode(),
                     json.dumps({"op": "search", "query": 1}).encode(),
                     json.dumps({"op": "ping", "pad": "x" * 5000}).encode()):
            reply = ask(sock, body)
            assert reply["ok"] is False and reply["error"]["code"] == "bad_request", body[:20]
        # ... and it still serves afterwards
        assert ask(sock, {"op": "ping"})["ok"] is True
    finally:
        sock.close()


def test_multipart_and_dealer_envelopes(server: tuple[ZmqServer, Stub]) -> None:
    srv, _ = server
    req = req_socket(srv)
    dealer = req_socket(srv, zmq.DEALER)
    try:
        req.send_multipart([b'{"op":"ping"}', b'{"op":"ping"}'])
        reply = json.loads(req.recv())
        assert reply["error"]["code"] == "bad_request" and "multipart" in reply["error"]["message"]
        # DEALER with the REQ-style empty delimiter
        dealer.send_multipart([b"", b'{"op":"ping","id":1}'])
        assert dealer.recv_multipart() == [b"", b'{"ok":true,"pong":true,"id":1}']
        # DEALER without a delimiter gets its reply in the same shape
        dealer.send(b'{"op":"ping","id":2}')
        assert json.loads(dealer.recv()) == {"ok": True, "pong": True, "id": 2}
        dealer.send_multipart([b"", b"a", b"b"])
        frames = dealer.recv_multipart()
        assert frames[0] == b"" and json.loads(frames[1])["error"]["code"] == "bad_request"
    finally:
        req.close()
        dealer.close()


def test_way_oversized_message_is_dropped_not_fatal(server: tuple[ZmqServer, Stub]) -> None:
    srv, _ = server
    big = req_socket(srv)
    big.setsockopt(zmq.RCVTIMEO, 500)
    try:
        big.send(b"x" * (srv.max_message_bytes * 4))  # above MAXMSGSIZE: libzmq disconnects
        with pytest.raises(zmq.Again):
            big.recv()
    finally:
        big.close()
    sock = req_socket(srv)
    try:
        assert ask(sock, {"op": "ping"})["ok"] is True
    finally:
        sock.close()


def test_sixteen_concurrent_clients(server: tuple[ZmqServer, Stub]) -> None:
    srv, _ = server
    errors: list[str] = []

    def client(n: int) -> None:
        sock = req_socket(srv)
        try:
            for i in range(25):
                q = f"client {n} request {i}"
                reply = ask(sock, {"op": "search", "query": q})
                if reply.get("echo") != q:
                    errors.append(f"{q!r} got {reply!r}")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(repr(exc))
        finally:
            sock.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors[:5]
    assert srv.requests >= 16 * 25


def test_slow_request_does_not_block_others(server: tuple[ZmqServer, Stub]) -> None:
    srv, stub = server
    stub.release.clear()
    slow = req_socket(srv)
    fast = req_socket(srv)
    try:
        slow.send(json.dumps({"op": "search", "query": "slow"}).encode())
        # The ping is answered while the slow search is still held by its handler.
        assert ask(fast, {"op": "ping"})["ok"] is True
        assert slow.poll(0) == 0
        stub.release.set()
        assert json.loads(slow.recv())["echo"] == "slow"
    finally:
        slow.close()
        fast.close()


def test_ping_and_status_never_queue_behind_busy_workers(
        sockdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every request worker held and more requests waiting for one: ping and status are still
    # answered (their own threads), and the server's problems say requests are queuing.
    monkeypatch.setattr(workers, "QUEUING_S", 0.0, raising=False)
    stub = Stub()
    stub.release.clear()
    srv = ZmqServer(f"ipc://{sockdir}/c.sock", stub, workers=1)
    srv.start()
    slow = [req_socket(srv) for _ in range(3)]
    fast = req_socket(srv)
    try:
        for s in slow:
            s.send(json.dumps({"op": "search", "query": "slow"}).encode())
        assert wait_for(lambda: srv.stats()["pools"]["requests"]["queued"] == 2, 5)
        assert ask(fast, {"op": "ping"})["pong"] is True
        assert ask(fast, {"op": "status"})["type"] == "StatusRequest"
        queuing = [p for p in srv.problems() if "queuing" in p]
        assert queuing and queuing[0].startswith("2 request(s) queuing for "), srv.problems()
        assert "all 1 request workers are busy (search)" in queuing[0]
        stub.release.set()
        assert [json.loads(s.recv())["echo"] for s in slow] == ["slow"] * 3
        assert not [p for p in srv.problems() if "queuing" in p]
    finally:
        stub.release.set()
        for s in [*slow, fast]:
            s.close()
        srv.stop(timeout=3)


def test_full_queue_is_answered_unavailable(sockdir: Path) -> None:
    stub = Stub()
    stub.release.clear()
    srv = ZmqServer(f"ipc://{sockdir}/q.sock", stub, workers=1, queue_size=1)
    srv.start()
    socks = [req_socket(srv) for _ in range(4)]
    try:
        for s in socks:
            s.send(json.dumps({"op": "search", "query": "slow"}).encode())
            time.sleep(0.05)
        # one is being handled, one is queued, the rest are refused at once
        poller = zmq.Poller()
        for s in socks:
            poller.register(s, zmq.POLLIN)
        refused: list[dict[str, Any]] = []
        deadline = time.monotonic() + 5
        while len(refused) < 2 and time.monotonic() < deadline:
            for s, _ in poller.poll(200):
                refused.append(json.loads(s.recv()))
                poller.unregister(s)
        assert [r["error"]["code"] for r in refused] == ["unavailable", "unavailable"]
        stub.release.set()
    finally:
        for s in socks:
            s.close()
        srv.stop(timeout=3)


def test_stop_delivers_in_flight_reply(sockdir: Path) -> None:
    stub = Stub()
    stub.release.clear()
    srv = ZmqServer(f"ipc://{sockdir}/f.sock", stub, workers=2)
    srv.start()
    sock = req_socket(srv)
    try:
        sock.send(json.dumps({"op": "search", "query": "slow"}).encode())
        time.sleep(0.2)
        stopper = threading.Thread(target=srv.stop, kwargs={"timeout": 5})
        stopper.start()
        time.sleep(0.2)
        stub.release.set()
        assert json.loads(sock.recv())["echo"] == "slow"
        stopper.join(10)
        assert not stopper.is_alive()
        assert srv.threads_done()
    finally:
        sock.close()


def test_socket_file_deleted_while_running_is_recreated(sockdir: Path) -> None:
    srv = ZmqServer(f"ipc://{sockdir}/r.sock", Stub(), socket_check_s=0.1)
    srv.start()
    try:
        path = sockdir / "r.sock"
        path.unlink()  # a tmp cleaner at work
        deadline = time.monotonic() + 5
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert path.exists()
        sock = req_socket(srv)
        assert ask(sock, {"op": "ping"})["ok"] is True
        sock.close()
    finally:
        srv.stop(timeout=3)


def test_bind_failure_is_a_clear_error(sockdir: Path) -> None:
    (sockdir / "file").write_text("")
    with pytest.raises(ServerError, match="cannot listen"):
        ZmqServer(f"ipc://{sockdir}/file/sub.sock", Stub()).start()


def test_split_envelope() -> None:
    assert split_envelope([b"id", b"", b"body"]) == ([b"id", b""], b"body", None)
    assert split_envelope([b"id", b"r2", b"", b"body"]) == ([b"id", b"r2", b""], b"body", None)
    assert split_envelope([b"id", b"body"]) == ([b"id"], b"body", None)
    assert split_envelope([b"id", b""])[2] is not None
    assert "multipart" in (split_envelope([b"id", b"", b"a", b"b"])[2] or "")
    assert split_envelope([b"x"] * 40)[2] is not None


def test_endpoint_rules(tmp_path: Path) -> None:
    ep = parse_endpoint("ipc:///tmp/a.sock")
    assert ep.kind == "ipc" and str(ep.ipc_path) == "/tmp/a.sock"
    assert lock_path(ep) == Path("/tmp/a.sock.lock")
    with pytest.raises(EndpointError, match="at most"):
        parse_endpoint("ipc:///tmp/" + "x" * 120 + ".sock")
    for ok in ("tcp://127.0.0.1:5555", "tcp://localhost:1", "tcp://[::1]:5555",
               "tcp://127.1.2.3:9"):
        assert parse_endpoint(ok).kind == "tcp"
    for remote in ("tcp://0.0.0.0:5555", "tcp://*:5555", "tcp://192.168.1.4:5555",
                   "tcp://eth0:5555"):
        with pytest.raises(EndpointError, match="loopback"):
            parse_endpoint(remote)
        assert parse_endpoint(remote, allow_remote=True).kind == "tcp"
    for junk in ("http://x", "tcp://nohost", "ipc://", "inproc://x"):
        with pytest.raises(EndpointError):
            parse_endpoint(junk)


def test_tcp_loopback_server() -> None:
    srv = ZmqServer("tcp://127.0.0.1:*", Stub())
    # a wildcard port is resolved by libzmq; read it back for the client
    srv.start()
    try:
        url = srv._frontend.getsockopt(zmq.LAST_ENDPOINT).decode()  # type: ignore[union-attr]
        sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 5000)
        sock.connect(url)
        assert ask(sock, {"op": "ping"})["ok"] is True
        sock.close()
    finally:
        srv.stop(timeout=3)


@pytest.mark.parametrize("host", ["127.0.0.1", "[::1]"])
def test_our_client_speaks_zmtp_over_tcp(host: str) -> None:
    # The client speaks ZMTP 3.0 itself (protocol/zmtp.py), not through pyzmq: over TCP too,
    # with frames past the 255-byte short form both ways, to the daemon's own ROUTER socket.
    from openmemd.client import Client

    srv = ZmqServer(f"tcp://{host}:*", Stub())
    srv.start()
    try:
        url = srv._frontend.getsockopt(zmq.LAST_ENDPOINT).decode()  # type: ignore[union-attr]
        with Client(url, timeout=5) as c:
            assert c.ping()["pong"] is True
            long_query = "a" * 3000  # a long frame out; the Stub echoes it in a long reply
            reply = c.search(long_query)
            assert reply["echo"] == long_query
            with pytest.raises(NotFoundError):
                c.get("missing.md")
            assert c.ping()["pong"] is True  # the connection is still good after an error
    finally:
        srv.stop(timeout=3)


def test_our_client_waits_for_a_tcp_daemon_that_is_starting() -> None:
    import socket
    import threading

    from openmemd.client import Client

    with socket.socket() as probe:  # a free port, closed again: nothing listens there yet
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    srv = ZmqServer(f"tcp://127.0.0.1:{port}", Stub())
    later = threading.Timer(0.5, srv.start)
    later.start()
    try:
        with Client(f"tcp://127.0.0.1:{port}", timeout=10) as c:
            assert c.ping()["pong"] is True
    finally:
        later.join()
        srv.stop(timeout=3)
