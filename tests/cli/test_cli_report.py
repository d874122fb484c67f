"""In-process command-line output: the relaxed-search note, `openmemd workspace`, and the
README's quick start run verbatim in a fresh HOME."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from openmemd import paths
from openmemd.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli(make_settings, workspace, tmp_path, capsys):
    make_settings()  # keyword-only, temp state dir
    endpoint = f"ipc://{tmp_path}/none.sock"

    def run(*args):
        code = main([*args, "--config", str(tmp_path / "config.toml"), "--endpoint", endpoint])
        out = capsys.readouterr()
        return code, out.out, out.err

    (workspace / "MEMORY.md").write_text("# Memory\n\nThe user's favourite tea is genmaicha.\n")
    return run


def test_relaxed_min_score_fallback_is_marked_in_text(cli):
    code, out, _ = cli("search", "genmaicha", "--min-score", "0.99")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == ("(relaxed: no result passed min score 0.99; showing keyword matches)")
    assert lines[2].endswith("MEMORY.md:1-3  → MEMORY.md#L3") and "explain:" not in out


def test_results_that_pass_min_score_carry_no_relaxed_note(cli):
    code, out, _ = cli("search", "genmaicha", "--min-score", "0")
    assert code == 0 and out.splitlines()[0].endswith("MEMORY.md:1-3  → MEMORY.md#L3")
    assert "relaxed" not in out
    code, out, _ = cli("search", "genmaicha", "--min-score", "0.99", "--json")
    assert code == 0 and "explain" not in out  # JSON keeps OpenClaw's shape


def test_status_deep_in_process_prints_the_probe(cli):
    code, out, _ = cli("status", "--deep")
    assert code == 2 and "daemon: not running" in out
    assert re.search(r"^  Probe: ok · \d+ results · ", out, re.M), out


def test_runtime_dir_candidates_cover_the_service_dirs(monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    uid = os.getuid()
    found = paths.runtime_dir_candidates()
    assert found[0] == paths.runtime_dir()
    assert Path(f"/run/user/{uid}/openmemd") in found and Path(f"/tmp/openmemd-{uid}") in found


# -- a new user in a fresh HOME -------------------------------------------------------------------
def fresh_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENMEMD_", "XDG_"))}
    env["HOME"] = str(home)
    return env


def workspace_cmd(home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "openmemd", "workspace", *extra],
                          env=fresh_env(home), capture_output=True, text=True, timeout=60)


def test_workspace_prints_the_default_and_creates_memory(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    got = workspace_cmd(home)
    assert got.returncode == 0, got.stderr
    ws = Path(got.stdout.strip())
    data = "Library/Application Support" if sys.platform == "darwin" else ".local/share"
    assert ws == home / data / "openmemd" / "workspace"
    assert (ws / "memory").is_dir()
    openclaw = home / ".openclaw" / "workspace"
    openclaw.mkdir(parents=True)  # OpenClaw's workspace exists: both tools share it
    got = workspace_cmd(home)
    assert got.returncode == 0 and Path(got.stdout.strip()) == openclaw
    assert (openclaw / "memory").is_dir()


def test_workspace_refuses_a_missing_explicit_dir_and_unknown_agent(tmp_path):
    got = workspace_cmd(tmp_path, "--workspace", str(tmp_path / "nope"))
    assert got.returncode == 1 and got.stderr.count("\n") == 1 and "does not exist" in got.stderr
    assert not (tmp_path / "nope").exists()
    got = workspace_cmd(tmp_path, "--agent", "nobody")
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and "unknown agent" in got.stderr


def quick_start_note_line() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    (line,) = [ln for ln in section.splitlines() if ln.startswith("echo ")]
    return line


@pytest.mark.parametrize("openclaw", [False, True], ids=["own-workspace", "openclaw-workspace"])
def test_readme_quick_start_note_works_as_written(tmp_path, openclaw):
    """The README's `echo ... >> ...` line, run verbatim by bash in a fresh HOME, writes the
    note into the workspace openmemd indexes, whether or not ~/.openclaw/workspace exists."""
    home = tmp_path / "home"
    (home / ".openclaw" / "workspace" if openclaw else home).mkdir(parents=True)
    clone = tmp_path / "clone"  # the README runs from a clone with .venv/bin/openmemd
    (clone / ".venv" / "bin").mkdir(parents=True)
    shim = clone / ".venv" / "bin" / "openmemd"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m openmemd "$@"\n')
    shim.chmod(0o755)
    got = subprocess.run(["bash", "-euo", "pipefail", "-c", quick_start_note_line()], cwd=clone,
                         env=fresh_env(home), capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    ws = workspace_cmd(home).stdout.strip()
    if openclaw:
        assert ws == str(home / ".openclaw" / "workspace")
    notes = list(Path(ws, "memory").glob("*.md"))
    assert len(notes) == 1 and "Lisbon" in notes[0].read_text()


def test_status_text_says_when_dreaming_is_left_to_openclaw(capsys) -> None:
    from openmemd.cli.report import print_status_text
    from openmemd.protocol.status import DaemonStatus

    agent = {"agent": "main", "workspace": "/w", "dreaming": {
        "leftToOpenClaw": True, "nextRun": None, "lastSweep": None}}
    print_status_text(DaemonStatus.from_json({
        "running": True, "health": "healthy", "agents": {"main": agent},
        "notes": ["main: dreaming: left to OpenClaw"]}))
    out = capsys.readouterr().out
    assert "Dreaming: next left to OpenClaw · last never" in out
    assert "note: main: dreaming: left to OpenClaw" in out


def test_status_text_says_when_a_postgres_index_is_being_built_or_failed() -> None:
    from openmemd.cli.report import _store_line
    from openmemd.protocol.status import StoreFacts

    store = {"backend": "postgres", "location": "postgresql://db/memory (namespace h/main)",
             "namespace": "h/main", "searchNamespaces": ["h/main", "team"],
             "serverVersion": "18.6", "pgvectorVersion": "0.8.6", "reachable": True}
    line = _store_line(StoreFacts.from_json(store), None)
    assert line == ("postgresql://db/memory (namespace h/main) · PostgreSQL "
                    "18.6 · pgvector 0.8.6 (also searching team)")
    building = _store_line(StoreFacts.from_json(
        {**store, "indexBuilding": "chunks_hnsw_m16_efc128_384"}), None)
    assert building.endswith("· building index chunks_hnsw_m16_efc128_384 (searches go on "
                             "meanwhile)")
    failed = _store_line(StoreFacts.from_json({**store, "indexBuildError": "out of disk space"}),
                         None)
    assert failed.endswith("· index build failed, retried at the next upkeep: out of disk space")
