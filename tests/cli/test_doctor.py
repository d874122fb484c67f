"""`openmemd doctor`: one line per check with the fix of each problem, --json, exit 0/1/2, on
real parts: the default model, sqlite-vec, a daemon in a subprocess, PostgreSQL, a tmpfs."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon_harness import Daemon, make_daemon
from helpers import mount_tmpfs
from openai_fake import EmbeddingServer
from openmemd import __version__
from openmemd.cli import main

PACKAGE = Path(__file__).resolve().parents[2] / "daemon" / "openmemd"


@pytest.fixture
def doctor(tmp_path, workspace, capsys):
    """Runs `openmemd doctor` in process with a config file of `toml` (the real default
    model unless it says otherwise) and an endpoint where no daemon listens."""

    def run(*args: str, toml: str = "") -> tuple[int, str]:
        config = tmp_path / "config.toml"
        config.write_text(f'workspace = "{workspace}"\nstate_dir = "{tmp_path / "state"}"\n'
                          + (toml or '[embedding]\nprovider = "local"\n'), encoding="utf-8")
        code = main(["doctor", *args, "--config", str(config),
                     "--endpoint", f"ipc://{tmp_path}/none.sock"])
        out, err = capsys.readouterr()
        assert err == ""  # every finding is a line of the report, said once
        return code, out

    (workspace / "MEMORY.md").write_text("# Memory\n\nThe kestrel nests on the roof.\n")
    return run


def line(out: str, name: str, *, having: str = "") -> str:
    found = [ln for ln in out.splitlines() if ln[2:].startswith(f"{name}:") and having in ln]
    assert len(found) == 1, out
    return found[0]


def tree(root: Path) -> list[tuple[str, int, int]]:
    return sorted((str(p), p.stat().st_mode, p.stat().st_mtime_ns) for p in root.rglob("*"))


def test_healthy_workspace_without_daemon(doctor, tmp_path, workspace):
    before = tree(workspace)
    code, out = doctor()
    assert code == 1, out  # the only problem: no daemon keeps the index fresh
    assert [ln[0] for ln in out.splitlines() if ln[:1] in ("✓", "!", "✗")] == [
        "✓"] * 8 + ["!"], out
    assert line(out, "workspace") == f"✓ workspace: {workspace} (agent main)"
    assert line(out, "index") == (f"✓ index: {tmp_path / 'state' / 'memory' / 'main.sqlite'} "
                                  "not created yet (the first index or search builds it)")
    assert line(out, "sqlite-vec").startswith("✓ sqlite-vec: sqlite-vec v")
    embedding = line(out, "embedding")
    assert embedding.startswith("✓ embedding: model e5-small-multilingual loaded in ")
    assert " ms, embedded one text in " in embedding and "(384 dims, offline)" in embedding
    assert line(out, "watch limits").startswith("✓ watch limits: 2 directories to watch, "
                                                "fs.inotify.max_user_watches = ")
    assert line(out, "daemon") == (
        "! daemon: no daemon is running: commands work in process, but nothing watches the "
        "workspace or runs dreaming — fix: openmemd service install (or openmemd run)")
    assert out.endswith("\n9 checks: 0 failed, 1 warned\n")
    # it only reads: no index, no state dir, the workspace untouched
    assert not (tmp_path / "state").exists()
    assert tree(workspace) == before


def test_json_shape(doctor):
    code, out = doctor("--json")
    report = json.loads(out)
    assert code == report["exitCode"] == 1 and report["result"] == "warn"
    assert set(report) == {"version", "agent", "workspace", "result", "exitCode", "checks"}
    assert [c["name"] for c in report["checks"]] == [
        "openclaw.json", "workspace", "state dir", "disk", "sqlite-vec", "index", "embedding",
        "watch limits", "daemon"]
    for check in report["checks"]:
        assert set(check) == {"name", "level", "message", "fix"}
        assert check["level"] in ("ok", "warn", "fail")
        assert bool(check["fix"]) == (check["level"] != "ok")


def test_loose_state_dir_is_a_warning_with_the_chmod(doctor, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o755)
    code, out = doctor(toml='[embedding]\nprovider = "none"\n')
    assert code == 1
    assert line(out, "state dir") == (
        f"! state dir: other local users can read or list it: {state} 0755 (it holds every "
        f"chunk of the memory) — fix: chmod 700 {state}")
    assert line(out, "embedding") == ("✓ embedding: embeddings are off (embedding.provider "
                                      "= none): keyword search only")
    assert state.stat().st_mode & 0o777 == 0o755  # doctor changes nothing
    (state / "memory").mkdir(mode=0o700)
    (state / "memory" / "main.sqlite").write_bytes(b"")
    (state / "memory" / "main.sqlite").chmod(0o644)  # as an older openmemd left it
    (state / "notes.txt").write_text("the user's own file: not ours to judge")
    code, out = doctor(toml='[embedding]\nprovider = "none"\n')
    assert line(out, "state dir") == (
        f"! state dir: other local users can read or list it: {state} 0755, "
        f"{state / 'memory' / 'main.sqlite'} 0644 (it holds every chunk of the memory) — fix: "
        f"chmod 700 {state} && chmod -R go-rwx {state / 'memory'}")


def test_broken_openclaw_json_is_a_warning_naming_the_file(doctor, tmp_path, monkeypatch):
    oc = tmp_path / "openclaw"
    oc.mkdir()
    (oc / "openclaw.json").write_text('{"agents": {"defaults": ', encoding="utf-8")
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(oc))
    code, out = doctor(toml='[embedding]\nprovider = "none"\n')
    assert code == 1
    found = line(out, "openclaw.json")
    assert found.startswith(f"! openclaw.json: {oc / 'openclaw.json'}: not valid JSON5 (")
    assert found.endswith(f"— fix: correct {oc / 'openclaw.json'}: until it reads, its "
                          "memorySearch settings and agents are not used")


@pytest.fixture
def embedding_server() -> Iterator[EmbeddingServer]:
    server = EmbeddingServer()
    yield server
    server.close()


def remote_toml(url: str) -> str:
    return f'[embedding]\nprovider = "openai"\nbase_url = "{url}"\nmodel = "fake-embed"\n'


def test_remote_provider_answers_one_request(doctor, embedding_server):
    code, out = doctor(toml=remote_toml(embedding_server.url))
    found = line(out, "embedding")
    assert found.startswith(f"✓ embedding: model fake-embed at {embedding_server.url}/embeddings"
                            " answered one request in ")
    assert found.endswith(" ms (8 dims)")
    assert len(embedding_server.requests) == 1
    assert code == 1, out  # the only warning: no daemon


def test_remote_provider_error_is_one_failed_request(doctor, embedding_server):
    embedding_server.script = [("status", 503, {"error": {"message": "warming up"}})] * 5
    code, out = doctor(toml=remote_toml(embedding_server.url))
    assert code == 2
    assert line(out, "embedding") == (
        f"✗ embedding: model fake-embed: embedding request to {embedding_server.url}/embeddings"
        " failed: HTTP 503: warming up — fix: check embedding.base_url, the API key and that "
        "the server runs")
    assert len(embedding_server.requests) == 1  # no retries: doctor reports, it does not wait


def test_a_config_that_does_not_load_is_the_one_failed_check(doctor, tmp_path):
    code, out = doctor(toml='[embedding]\nprovider = "bogus"\n')
    assert code == 2
    assert out.splitlines()[0].startswith(f"✗ config: {tmp_path / 'config.toml'}: ")
    assert "'embedding.provider'" in out and out.endswith("\n1 check: 1 failed, 0 warned\n")


@pytest.mark.parametrize(("size", "level", "says"), [
    ("512m", "!", ": under 1 GiB or 5 % free is too little room for a full rebuild (it "
                  "writes a second copy of the index, 0 B now)"),
    ("32m", "✗", ": writes fail or are about to (too little room for a full rebuild (it "
                 "writes a second copy of the index, 0 B now))"),
])
def test_little_disk_space_is_named_with_why(doctor, tmp_path, size, level, says):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    why = mount_tmpfs(state, size)
    if why:
        pytest.skip(why)
    state.chmod(0o700)  # a tmpfs root is 1777
    try:
        code, out = doctor(toml='[embedding]\nprovider = "none"\n')
    finally:
        subprocess.run(["umount", "-l", str(state)], capture_output=True)
    found = line(out, "disk", having="for the state dir")
    assert found.startswith(f"{level} disk: ") and " MiB free of " in found
    assert says in found, found
    assert found.endswith("— fix: free space on that disk")
    assert code == (1 if level == "!" else 2)
    assert [ln for ln in out.splitlines() if "for the workspace" in ln]  # its own line


# -- a daemon in a subprocess -----------------------------------------------------------------
@pytest.fixture
def daemon() -> Iterator[Daemon]:
    gen = make_daemon()
    d = next(gen)
    d.start()
    try:
        yield d
    finally:
        gen.close()


def run_json(d: Daemon, workspace: Path) -> tuple[int, dict[str, dict[str, str]]]:
    env = {k: v for k, v in d.env.items() if k != "PYTHONPATH"}  # this package, not its copy
    done = subprocess.run([sys.executable, "-m", "openmemd", "doctor", "--json", "--config",
                           str(d.config), "--workspace", str(workspace), "--state-dir",
                           str(d.root / "state")], env=env, capture_output=True, text=True,
                          timeout=120)
    assert not done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert report["exitCode"] == done.returncode
    return done.returncode, {c["name"]: c for c in report["checks"]}


def test_daemon_serving_this_workspace(daemon):
    code, checks = run_json(daemon, daemon.workspace)
    assert checks["daemon"]["level"] == "ok"
    assert checks["daemon"]["message"] == (
        f"pid {daemon.proc.pid} at {daemon.endpoint} (openmemd {__version__}) serves this "
        "workspace and index")
    assert checks["daemon health"] == {"name": "daemon health", "level": "ok",
                                       "message": "healthy", "fix": ""}
    assert "daemon version" not in checks  # the same version
    assert code == 0, checks


def test_a_daemon_of_another_version_is_an_upgrade_under_it():
    gen = make_daemon()
    d = next(gen)
    try:
        # The daemon runs a copy of the package that calls itself older: what it still runs
        # after `pip install -U openmemd` replaced the package under it.
        site = d.root / "site"
        shutil.copytree(PACKAGE, site / "openmemd", ignore=shutil.ignore_patterns("__pycache__"))
        init = site / "openmemd" / "__init__.py"
        init.write_text(init.read_text().replace(f'__version__ = "{__version__}"',
                                                 '__version__ = "0.0.1"'))
        d.env["PYTHONPATH"] = str(site)
        d.start()
        code, checks = run_json(d, d.workspace)
    finally:
        gen.close()
    assert checks["daemon"]["level"] == "ok" and "(openmemd 0.0.1)" in checks["daemon"]["message"]
    found = checks["daemon version"]
    assert found["level"] == "warn"
    assert found["message"] == (f"the daemon runs openmemd 0.0.1, this command is {__version__}:"
                                " it was upgraded under the running daemon")
    assert found["fix"].startswith("restart the daemon: ")
    assert code == 1


def test_daemon_serving_another_workspace_is_named(daemon, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    code, checks = run_json(daemon, other)
    assert code == 1
    found = checks["daemon"]
    assert found["level"] == "warn"
    assert found["message"] == (f"no running daemon serves this workspace and state dir (pid "
                                f"{daemon.proc.pid} at {daemon.endpoint} serves main: "
                                f"{daemon.workspace})")
    assert "--workspace" in found["fix"]
    assert "daemon health" not in checks


# -- PostgreSQL ---------------------------------------------------------------------------------
def postgres_toml(url: str) -> str:
    return f'[embedding]\nprovider = "none"\n[store]\nbackend = "postgres"\nurl = "{url}"\n'


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_postgres_unreachable_is_one_failed_line(doctor):
    url = f"postgresql://postgres@127.0.0.1:{closed_port()}/memory"
    code, out = doctor(toml=postgres_toml(url))
    assert code == 2
    found = line(out, "postgresql")
    assert found.startswith(f"✗ postgresql: PostgreSQL at {url} is unavailable (connecting to "
                            "it failed): ")
    assert found.endswith("— fix: start the server, or correct store.url (or "
                          "OPENMEMD_STORE_URL)")
    assert "sqlite-vec:" not in out  # not used with this store


def test_postgres_utf8_database_is_ok(doctor, pg_url):
    code, out = doctor(toml=postgres_toml(pg_url))
    found = line(out, "postgresql")
    assert found.startswith(f"✓ postgresql: database {pg_url.rsplit('/', 1)[1]} at {pg_url} "
                            "answers: PostgreSQL ")
    assert ", encoding UTF8, pgvector " in found and found.endswith(" available")
    assert code == 1, out  # the only warning: no daemon


def test_postgres_sql_ascii_database_fails_with_how_to_make_a_utf8_one(doctor, pg_server):
    if not pg_server.running():
        pg_server.start()
    name = "a_" + uuid.uuid4().hex[:12]
    pg_server.admin(f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' TEMPLATE template0 "
                    "LC_COLLATE 'C' LC_CTYPE 'C'")
    try:
        code, out = doctor(toml=postgres_toml(pg_server.url(name)))
    finally:
        pg_server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    assert code == 2
    assert line(out, "postgresql") == (
        f"✗ postgresql: store.url {pg_server.url(name)} names a database encoded SQL_ASCII, "
        "and openmemd needs UTF8: create one with `createdb --encoding=UTF8 "
        "--template=template0 NAME` (or a server with `initdb --encoding=UTF8 "
        "--locale=C.UTF-8`) and point store.url at it — fix: point store.url at a UTF-8 "
        "database")


def test_doctor_runs_without_a_terminal_that_shows_marks(tmp_path, workspace):
    config = tmp_path / "config.toml"
    config.write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMEMD_")}
    env.update(PYTHONIOENCODING="ascii", OPENMEMD_ENDPOINT=f"ipc://{tmp_path}/none.sock")
    done = subprocess.run([sys.executable, "-m", "openmemd", "doctor", "--config", str(config),
                           "--workspace", str(workspace), "--state-dir", str(tmp_path / "s")],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "ok workspace: " in done.stdout
    assert "warn daemon: no daemon is running" in done.stdout and " - fix: " in done.stdout
