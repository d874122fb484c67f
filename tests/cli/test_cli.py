"""The command line in-process (no daemon at the endpoint): output shapes, exit codes, errors."""

import json
import subprocess
import sys

import pytest

from openmemd.cli import main


@pytest.fixture
def cli(make_settings, workspace, tmp_path, capsys):
    make_settings()  # writes tmp_path/config.toml: keyword-only, temp state dir
    endpoint = f"ipc://{tmp_path}/none.sock"  # nothing listens here

    def run(*args):
        code = main([*args, "--config", str(tmp_path / "config.toml"), "--endpoint", endpoint])
        out = capsys.readouterr()
        return code, out.out, out.err

    (workspace / "MEMORY.md").write_text("# Memory\n\nThe user's favourite tea is genmaicha.\n")
    (workspace / "memory" / "2026-11-01.md").write_text("Planted tulip bulbs in the garden.\n")
    return run


def test_index_json_then_search_json_shape(cli):
    code, out, _ = cli("index", "--json")
    report = json.loads(out)
    assert code == 0 and report["indexed"] == 2 and report["scanned"] == 2
    code, out, _ = cli("search", "tulip", "bulbs", "--json")
    data = json.loads(out)
    assert code == 0 and data["mode"] == "fts-only"
    (hit,) = data["results"]
    assert set(hit) == {"path", "startLine", "endLine", "score", "snippet", "source",
                        "citation", "focus"}
    assert hit["focus"] == {"startLine": 1, "endLine": 1}
    assert hit["path"] == "memory/2026-11-01.md" and hit["citation"] == "memory/2026-11-01.md#L1"
    assert hit["startLine"] == hit["endLine"] == 1 and hit["source"] == "memory"


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_search_without_a_daemon_sees_the_notes_changed_since_the_last_index(
        backend, make_settings, workspace, tmp_path, capsys, request):
    # No watcher runs: the search itself catches the index up with the Markdown. On
    # PostgreSQL it once looked for the SQLite file, never there, and missed every edit.
    store = ""
    if backend == "postgres":
        store = f'[store]\nbackend = "postgres"\nurl = "{request.getfixturevalue("pg_url")}"\n'
    make_settings(store)
    args = ["--config", str(tmp_path / "config.toml"), "--endpoint", f"ipc://{tmp_path}/no.sock"]
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe boat is painted teal.\n")
    assert main(["index", *args]) == 0
    (workspace / "memory" / "2026-11-02.md").write_text("A giraffe named Xylophone.\n")
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe boat is painted crimson.\n")
    capsys.readouterr()

    def found(query: str) -> list[str]:
        assert main(["search", query, "--json", "--min-score", "0", *args]) == 0
        return [r["path"] for r in json.loads(capsys.readouterr().out)["results"]]

    assert found("giraffe Xylophone") == ["memory/2026-11-02.md"]
    assert found("crimson") == ["MEMORY.md"]
    assert found("teal") == []


def test_search_text_and_explain(cli):
    code, out, _ = cli("search", "genmaicha", "--explain")
    assert code == 0
    assert out.splitlines()[0].endswith("MEMORY.md:1-3  → MEMORY.md#L3") and "explain:" in out
    code, out, _ = cli("search", "zeppelin")
    assert code == 0 and out.strip() == "No matches."


def test_get_prints_lines_and_refuses_escapes(cli):
    code, out, _ = cli("get", "MEMORY.md", "--from", "3", "--lines", "1")
    assert code == 0 and out == "The user's favourite tea is genmaicha.\n"
    code, out, err = cli("get", "../config.toml")
    assert code == 1 and out == "" and err.count("\n") == 1 and "outside the workspace" in err
    code, _, err = cli("get", "memory/2099-01-01.md")
    assert code == 1 and "no such file" in err


def test_status_without_daemon_exits_2_and_describes_the_index(cli):
    cli("index")
    code, out, _ = cli("status", "--json")
    data = json.loads(out)
    assert code == 2 and data["running"] is False
    (agent,) = data["agents"]
    assert agent["files"] == {"onDisk": 2, "indexed": 2, "stale": 0, "deletedOnDisk": 0}
    assert agent["provider"]["model"] == "fts-only" and agent["fts"]["available"]
    code, out, _ = cli("status")
    assert code == 2 and "daemon: not running" in out and "Indexed: 2/2 files" in out


def test_missing_workspace_is_one_clear_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "openmemd", "search", "x", "--workspace",
         str(tmp_path / "nope"), "--state-dir", str(tmp_path / "s"), "--endpoint",
         f"ipc://{tmp_path}/none.sock"], capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and "does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_dream_dry_run_writes_nothing(cli, workspace):
    before = sorted(p.relative_to(workspace) for p in workspace.rglob("*"))
    code, out, _ = cli("dream", "--dry-run")
    assert code == 0 and "dry run" in out
    assert sorted(p.relative_to(workspace) for p in workspace.rglob("*")) == before


def test_add_saves_the_note_once_when_it_cannot_be_indexed(make_settings, workspace, tmp_path,
                                                           capsys, pg_server, pg_url):
    # The note is written before it is indexed: reporting a failure then would make the user
    # (or an agent) add it again. The index is on a PostgreSQL server that has gone away.
    make_settings(f'[store]\nbackend = "postgres"\nurl = "{pg_url}"\n')
    args = ["--config", str(tmp_path / "config.toml"), "--endpoint", f"ipc://{tmp_path}/no.sock"]
    (workspace / "MEMORY.md").write_text("# Memory\n")
    assert main(["index", *args]) == 0
    capsys.readouterr()
    pg_server.stop()
    try:
        assert main(["add", "The", "heron", "nests", "by", "the", "weir", *args]) == 0
        out = capsys.readouterr()
        assert out.out.startswith("Added memory/")
        assert out.err.startswith("openmemd: saved, not indexed yet: PostgreSQL at ")
        assert "unavailable" in out.err and "the next sync or search indexes it" in out.err
    finally:
        pg_server.start()
    (daily,) = (workspace / "memory").glob("*.md")
    assert daily.read_text().count("heron") == 1
    assert main(["search", "heron", "--json", "--min-score", "0", *args]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert [r["path"] for r in results] == [f"memory/{daily.name}"]
