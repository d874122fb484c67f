"""A daemon answers its very first requests, all at once, without `internal` (issue 25: the
first 24 requests to a new daemon got 35/192 `internal` replies in 6 of 8 daemons -- modules
imported lazily from request threads, several at once)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from daemon_harness import Daemon, make_daemon
from openmemd.client import Client, RemoteInternal, RemoteUnavailable

OPS: dict[str, Callable[[Client], Any]] = {
    "search": lambda c: c.search("pelican", min_score=0.0),
    "get": lambda c: c.get("MEMORY.md"),
    "add": lambda c: c.add("The first request of the day."),
    "status deep": lambda c: c.status(deep=True),
    "sync": lambda c: c.sync(wait=False),
    "dream dry-run": lambda c: c.dream(phase="all", dry_run=True),
}
PER_OP = 4  # 24 requests, as in the report


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    yield from make_daemon()


@pytest.mark.parametrize("attempt", range(3))
def test_first_requests_at_once_never_internal(daemon: Daemon, attempt: int) -> None:
    (daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe codeword is pelican.\n")
    daemon.start()  # ready = answers a ping, which imports nothing
    clients = [(name, daemon.client(timeout=120)) for name in OPS for _ in range(PER_OP)]
    gate = threading.Barrier(len(clients))
    internal: list[str] = []
    answered: list[str] = []

    def fire(name: str, client: Client) -> None:
        with client:
            gate.wait()
            try:
                OPS[name](client)
                answered.append(name)
            except RemoteUnavailable:  # a busy long-op pool says so: allowed
                answered.append(name)
            except RemoteInternal as exc:
                internal.append(f"{name}: {exc}")

    threads = [threading.Thread(target=fire, args=pair) for pair in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert internal == [], f"{len(internal)} internal replies: {internal[:4]}\n" + \
        daemon.stderr()[-3000:]
    assert len(answered) == len(clients)
    assert daemon.stop() == 0
