"""A host that vanishes without closing its connections (power lost, network gone), for real:
the other end of the connection lives in a second network namespace whose link is cut.

Without TCP keepalives neither end would notice for 2 h 11 min (Linux's defaults): the server
would keep the dead writer's session, and with it the namespace's writer lock, so the daemon
restarted elsewhere is locked out; a query waiting on a vanished server would hold its thread.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import netns
from helpers import wait_for
from openmemd.errors import IndexLockedError
from openmemd.store.base import StoreUnavailableError
from openmemd.store.postgres.connect import (
    KEEPALIVE_COUNT,
    KEEPALIVE_IDLE_S,
    KEEPALIVE_INTERVAL_S,
    TCP_USER_TIMEOUT_MS,
    PgConnectSpec,
    connect,
    translated,
)
from openmemd.store.postgres.session import WriterSession
from pg_server import PgServer, private_root

pytestmark = pytest.mark.skipif(netns.unavailable() is not None,
                                reason=netns.unavailable() or "")

NS = "team/vanishing"
# when keepalives give up on a silent peer, plus room for a slow machine
NOTICED_WITHIN_S = max(KEEPALIVE_IDLE_S + KEEPALIVE_INTERVAL_S * KEEPALIVE_COUNT,
                       TCP_USER_TIMEOUT_MS / 1000) + 20
HOLD_THE_LOCK = """
import sys, time
from openmemd.store.postgres.connect import PgConnectSpec
from openmemd.store.postgres.session import WriterSession
session = WriterSession(PgConnectSpec(sys.argv[1], 5000), sys.argv[2], None)
conn = session.connection()  # held: the lock lives as long as this connection
print("locked", flush=True)
time.sleep(600)
"""


@pytest.fixture
def server_root() -> Iterator[Path]:
    with private_root() as root:
        yield root


def test_the_lock_of_a_writer_whose_host_vanished_is_free_again_in_seconds(
        server_root: Path) -> None:
    with netns.other_host() as host:
        server = PgServer(server_root, listen=("127.0.0.1", host.here))
        server.init()
        server.trust(host.network)
        server.start()
        server.admin("CREATE EXTENSION vector")  # the writer's session registers the type
        far_url = f"postgresql://postgres@{host.here}:{server.port}/postgres"
        holder = subprocess.Popen(host.run_there(sys.executable, "-c", HOLD_THE_LOCK, far_url, NS),
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
            here = WriterSession(PgConnectSpec(server.url(), 5000), NS, None)  # the lock alone
            with pytest.raises(IndexLockedError, match="another openmemd process"):
                here.connection()
            host.cut()

            def taken() -> bool:
                try:
                    here.connection()
                except IndexLockedError:
                    return False
                return True

            assert wait_for(taken, NOTICED_WITHIN_S, interval=1.0)
            assert holder.poll() is None  # the old writer lives on, cut off: never told
            here.close()
        finally:
            holder.kill()
            holder.wait(10)
            server.stop()


def test_a_query_waiting_on_a_server_that_vanished_fails_in_seconds(server_root: Path) -> None:
    with netns.other_host() as host:
        server = PgServer(server_root, listen=(host.address,), netns=host.name)
        server.init()
        server.trust(host.network)
        server.start()
        try:
            target = PgConnectSpec(server.url(), 600_000)
            conn = connect(target)
            outcome: list[BaseException | None] = []

            def query() -> None:
                try:
                    with translated(target, "reading from"):
                        conn.execute("SELECT pg_sleep(300)")
                    outcome.append(None)
                except BaseException as exc:
                    outcome.append(exc)

            thread = threading.Thread(target=query, daemon=True)
            thread.start()
            assert wait_for(lambda: _sleeping(server), 10)
            host.cut()
            thread.join(NOTICED_WITHIN_S)
            assert not thread.is_alive(), "the query still waits on a server that is gone"
            (error,) = outcome
            assert isinstance(error, StoreUnavailableError), error
            assert "unavailable" in str(error)
            conn.close()
        finally:
            server.stop()


def _sleeping(server: PgServer) -> bool:
    import psycopg

    with psycopg.connect(server.url(), autocommit=True, connect_timeout=5) as admin:
        row = admin.execute("SELECT count(*) FROM pg_stat_activity "
                            "WHERE query LIKE 'SELECT pg_sleep(300)%'").fetchone()
    return bool(row and row[0])
