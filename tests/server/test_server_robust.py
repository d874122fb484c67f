"""No request silences the server: real ZeroMQ sockets, the real ZmqServer, and the real
Dispatcher over a real index where the long operations matter."""

from __future__ import annotations

import json
import random
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from helpers import wait_for
from openmemd.config import Settings
from openmemd.protocol.requests import PingRequest, Request, SearchRequest, StatusRequest
from openmemd.protocol.status import SchedulerStatus
from openmemd.server.agent import AgentRuntime
from openmemd.server.daemon import Daemon
from openmemd.server.handlers import Dispatcher
from openmemd.server.zmq_server import Handler, ZmqServer


class Said(dict[str, Any]):
    """A reply's fields, as the server encodes a reply record."""

    def to_json(self) -> dict[str, Any]:
        return dict(self)


class Stub:
    """A handler with a query that blocks and one that ends its thread like sys.exit() would."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, req: Request) -> Said:
        if isinstance(req, SearchRequest):
            if req.query == "slow":
                self.release.wait(20)
            if req.query == "exit":
                raise SystemExit(3)
            return Said(echo=req.query)
        if isinstance(req, PingRequest):
            return Said(pong=True)
        return Said(type=type(req).__name__)


_: Handler = Stub()  # mypy: the stub is a complete request handler


@pytest.fixture
def stub_server(sockdir: Path) -> Iterator[tuple[ZmqServer, Stub]]:
    stub = Stub()
    srv = ZmqServer(f"ipc://{sockdir}/s.sock", stub, workers=4, max_message_bytes=64 * 1024,
                    stuck_after_s=0.5)
    srv.start()
    yield srv, stub
    stub.release.set()
    srv.stop(timeout=3)


def socket_for(url: str, kind: int = zmq.REQ, timeout_ms: int = 5000) -> zmq.Socket[bytes]:
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(kind)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, timeout_ms)
    sock.connect(url)
    return sock


def ask(sock: zmq.Socket[bytes], body: bytes | dict[str, Any]) -> dict[str, Any]:
    sock.send(body if isinstance(body, bytes) else json.dumps(body).encode())
    reply: dict[str, Any] = json.loads(sock.recv())
    return reply


# Python's json writes a lone surrogate str as the escape "\ud800", as a client would send it.
SURROGATE_BODIES = [
    b'{"op":"ping","id":"\\ud800"}',
    b'{"op":"search","query":"x","id":"\\udfff"}',
    b'{"op":"get","path":"memory/\\ud800.md","id":"a\\ud800"}',
    b'{"op":"search","query":"caf\\udce9"}',
    b'{"op":"get","path":"\\udcff"}',
    b'{"op":"status","agent":"\\ud800"}',
    b'{"op":"dream","phase":"\\ud800"}',
    b'{"op":"search","query":"x","sources":["\\ud800"]}',
    b'{"op":"\\ud800"}',
    b'{"op":"ping","\\ud800":"\\ud800"}',
]


def test_lone_surrogates_in_any_field_never_silence_the_server(
        stub_server: tuple[ZmqServer, Stub]) -> None:
    srv, _ = stub_server
    sock = socket_for(srv.endpoint.url)
    try:
        for _ in range(3):  # 30 requests: far more than the 4 workers
            for body in SURROGATE_BODIES:
                reply = ask(sock, body)
                assert "ok" in reply, body
        # an id is echoed exactly (as a JSON escape); a surrogate in text is a bad request
        assert ask(sock, SURROGATE_BODIES[0]) == {"ok": True, "pong": True, "id": "\ud800"}
        reply = ask(sock, SURROGATE_BODIES[3])
        assert reply["error"]["code"] == "bad_request"
        assert reply["error"]["message"].startswith("'query' must be valid Unicode")
        reply = ask(sock, SURROGATE_BODIES[2])
        assert reply["error"]["message"].startswith("'path' must be valid Unicode")
        assert reply["id"] == "a\ud800"
        assert ask(sock, {"op": "ping"}) == {"ok": True, "pong": True}
    finally:
        sock.close()
    assert wait_for(lambda: srv.stalled() == [], 10)


def _junk(rng: random.Random, depth: int = 0) -> Any:
    choice = rng.randrange(9 if depth < 3 else 6)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, -1, 1, 7, 2**63, -(2**70), 10**300, 201, 200])
    if choice == 3:
        return rng.choice([0.5, -0.0, 1e308, -1e308, 2.5, 1.0, 5e-324])
    if choice in (4, 5):
        return rng.choice(["", " ", "x", "\ud800", "a\udfffb", "\x00", "é" * 3000, "memory/a.md",
                           "../../etc/passwd", "main", "all", "memory", "\U0001f600"])
    if choice == 6:
        return [_junk(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["a", "id", "op", "\ud800"]): _junk(rng, depth + 1)
            for _ in range(rng.randrange(3))}


def fuzz_bodies(n: int, seed: int = 9) -> list[bytes]:
    rng = random.Random(seed)
    fields = ["op", "id", "agent", "query", "path", "maxResults", "minScore", "sources",
              "explain", "from", "lines", "force", "wait", "phase", "dryRun", "deep"]
    ops = ["ping", "status", "search", "get", "sync", "dream", "nope", ""]
    bodies: list[bytes] = [b"\xff\xfe\xfd", b"{\"op\":\"ping\",\"id\":\"\xed\xa0\x80\"}",
                           b"[" * 5000 + b"]" * 5000, b"1e400", b'{"op":"ping","id":1e400}',
                           b'{"op":"search","query":"x","maxResults":1' + b"0" * 4000 + b"}",
                           b'{"op":"search","query":"x","maxResults":1' + b"0" * 5000 + b"}",
                           b'{"op":"ping","id":NaN}', b"\x00", b'"\\ud800"']
    valid: list[dict[str, Any]] = [
        {"op": "ping"}, {"op": "status"}, {"op": "search", "query": "pelican"},
        {"op": "get", "path": "MEMORY.md"}, {"op": "sync", "wait": False},
        {"op": "search", "query": "x", "maxResults": 3, "minScore": 0.1}]
    for base in valid:  # a lone surrogate in every field of every op
        for key in fields:
            bodies.append(json.dumps({**base, key: "x\ud800"}).encode())
    while len(bodies) < n:
        if rng.random() < 0.5:  # a valid request with one or two fields made odd
            obj: dict[Any, Any] = dict(rng.choice(valid))
            for key in rng.sample(fields[1:], rng.randrange(1, 3)):
                obj[key] = _junk(rng)
        else:
            obj = {"op": rng.choice(ops) if rng.random() < 0.8 else _junk(rng)}
            for key in rng.sample(fields, rng.randrange(len(fields))):
                obj[key] = _junk(rng)
        raw = json.dumps(obj).encode()
        if rng.random() < 0.05:
            raw = raw[: rng.randrange(len(raw) + 1)]  # truncated
        bodies.append(raw)
    return bodies


def test_fuzzed_messages_each_get_exactly_one_reply(
        stub_server: tuple[ZmqServer, Stub]) -> None:
    srv, stub = stub_server
    stub.release.set()  # a fuzzed "slow" query must not wait
    dealer = socket_for(srv.endpoint.url, zmq.DEALER)
    try:
        bodies = fuzz_bodies(400)
        for i, body in enumerate(bodies):
            dealer.send_multipart([b"", body])
            frames = dealer.recv_multipart()
            assert frames[0] == b"" and len(frames) == 2, (i, body[:80])
            reply = json.loads(frames[1])
            assert isinstance(reply.get("ok"), bool), (i, body[:80], reply)
            if not reply["ok"]:
                assert reply["error"]["code"] in ("bad_request", "not_found", "unavailable",
                                                  "internal"), reply
        # nothing answered twice
        assert dealer.poll(300) == 0
        dealer.send_multipart([b"", b'{"op":"ping","id":"after"}'])
        assert json.loads(dealer.recv_multipart()[1]) == {"ok": True, "pong": True,
                                                          "id": "after"}
    finally:
        dealer.close()
    assert wait_for(lambda: srv.stalled() == [], 10)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_worker_thread_that_dies_is_replaced_and_its_request_answered(
        stub_server: tuple[ZmqServer, Stub]) -> None:
    srv, _ = stub_server
    sock = socket_for(srv.endpoint.url)
    try:
        for _ in range(10):  # every worker dies at least twice
            reply = ask(sock, {"op": "search", "query": "exit", "id": 5})
            assert reply["ok"] is False and reply["error"]["code"] == "internal"
            assert "died" in reply["error"]["message"] and reply.get("id") is None
        assert ask(sock, {"op": "ping"}) == {"ok": True, "pong": True}
    finally:
        sock.close()
    stats = srv.stats()
    assert stats["pools"]["requests"]["deaths"] == 10
    assert any("died" in p and "SystemExit" in p for p in stats["problems"])
    assert wait_for(lambda: srv.stalled() == [], 10)  # replaced: the daemon keeps serving


def test_a_stuck_request_is_reported_and_stops_the_watchdog(
        stub_server: tuple[ZmqServer, Stub]) -> None:
    srv, stub = stub_server
    slow = socket_for(srv.endpoint.url)
    try:
        slow.send(json.dumps({"op": "search", "query": "slow"}).encode())
        assert wait_for(lambda: any("stuck on search" in p for p in srv.stalled()), 10)
        dispatcher = Dispatcher({}, endpoint="test", watch_enabled=lambda: False,
                                scheduler_info=lambda: SchedulerStatus(True, {}),
                                server_info=srv.stats)
        status = dispatcher.status(StatusRequest())
        assert status.health == "degraded"
        assert any("stuck on search" in p for p in status.problems or ()), status.problems
        stub.release.set()
        assert json.loads(slow.recv())["echo"] == "slow"
        assert wait_for(lambda: srv.stalled() == [], 10)
    finally:
        slow.close()


def test_watchdog_is_fed_only_while_the_workers_serve(stub_server: tuple[ZmqServer, Stub],
                                                     sockdir: Path) -> None:
    srv, stub = stub_server
    path = sockdir / "notify"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(path))
    notify.settimeout(5)
    daemon = Daemon(Settings(), env={"NOTIFY_SOCKET": str(path)})
    daemon.server = srv  # the daemon's own watchdog rule, over a real server
    slow = socket_for(srv.endpoint.url)
    try:
        assert daemon._feed_watchdog() and notify.recv(64) == b"WATCHDOG=1"
        slow.send(json.dumps({"op": "search", "query": "slow"}).encode())
        assert wait_for(lambda: srv.stalled() != [], 10)
        assert daemon._feed_watchdog() is False
        stub.release.set()
        assert json.loads(slow.recv())["echo"] == "slow"
        assert wait_for(daemon._feed_watchdog, 10) and notify.recv(64) == b"WATCHDOG=1"
    finally:
        slow.close()
        notify.close()


# -- long operations through the real dispatcher ------------------------------------------------

@pytest.fixture
def real_server(make_settings: Any, workspace: Path, sockdir: Path
                ) -> Iterator[tuple[ZmqServer, AgentRuntime]]:
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    settings = make_settings("[sync]\nwatch = false\n")
    agent = AgentRuntime("main", settings)
    agent.open()
    agent.start()
    assert agent.indexer is not None
    agent.indexer.sync().result(30)
    server: list[ZmqServer] = []
    dispatcher = Dispatcher({"main": agent}, endpoint="test", watch_enabled=lambda: False,
                            scheduler_info=lambda: SchedulerStatus(True, {}),
                            server_info=lambda: server[0].stats())
    srv = ZmqServer(f"ipc://{sockdir}/r.sock", dispatcher, workers=4, stuck_after_s=2.0)
    server.append(srv)
    srv.start()
    yield srv, agent
    srv.stop(timeout=3)
    agent.stop(timeout=10)


def test_four_waiting_syncs_do_not_starve_searches(
        real_server: tuple[ZmqServer, AgentRuntime]) -> None:
    srv, agent = real_server
    gate = threading.Event()
    assert agent.indexer is not None
    blocker = agent.indexer.run_job("test-gate", lambda ix: gate.wait(30))
    syncs = [socket_for(srv.endpoint.url, timeout_ms=30000) for _ in range(4)]
    search = socket_for(srv.endpoint.url)
    try:
        for s in syncs:
            s.send(json.dumps({"op": "sync", "wait": True}).encode())
        # two take the long-op pool's threads; the other two are told to retry at once
        poller = zmq.Poller()
        for s in syncs:
            poller.register(s, zmq.POLLIN)
        busy: dict[zmq.Socket[bytes], dict[str, Any]] = {}
        while len(busy) < 2:
            ready = dict(poller.poll(10000))
            assert ready, f"no refusal; got {busy}"
            for s in ready:
                busy[s] = json.loads(s.recv())
                poller.unregister(s)
        assert all(r["error"]["code"] == "unavailable" and "busy" in r["error"]["message"]
                   for r in busy.values()), busy
        for _ in range(5):
            reply = ask(search, {"op": "search", "query": "pelican", "minScore": 0})
            assert [r["path"] for r in reply["results"]] == ["MEMORY.md"]
        # long operations are not "stuck" under the short-request bound (2 s here)
        assert wait_for(lambda: srv.stats()["pools"]["longOps"]["longestBusySeconds"] > 2.5)
        status = ask(search, {"op": "status"})
        assert status["server"]["pools"]["longOps"]["busy"] == 2
        assert status["health"] == "healthy", status["problems"]
        gate.set()
        for s in syncs:
            if s not in busy:
                assert "report" in json.loads(s.recv())
    finally:
        gate.set()
        blocker.result(30)
        for s in [*syncs, search]:
            s.close()
