"""`openmemd` on PostgreSQL as a user runs it without a daemon (a subprocess, in process), and
what a namespace holds, row by row: for the rebuild fault tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg

NS = "team/rebuilt"
NOTES = {
    "MEMORY.md": "# Memory\n\nThe kestrel nests on the north roof.\n",
    "memory/2026-11-30.md": "# 2026-11-30\n\nDeploy freeze from Friday; the walrus is back.\n",
}


def cli(tmp_path: Path, workspace: Path, url: str, *args: str) -> subprocess.Popen[str]:
    config = tmp_path / "config.toml"
    config.write_text(f'[embedding]\nprovider = "none"\n[store]\nbackend = "postgres"\n'
                      f'url = "{url}"\nnamespace = "{NS}"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMEMD_")}
    env["OPENMEMD_ENDPOINT"] = f"ipc://{tmp_path}/none.sock"  # no daemon: work in process
    return subprocess.Popen([sys.executable, "-m", "openmemd", *args, "--config", str(config),
                             "--workspace", str(workspace), "--state-dir",
                             str(tmp_path / "state")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def run(tmp_path: Path, workspace: Path, url: str, *args: str) -> str:
    proc = cli(tmp_path, workspace, url, *args)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return out


def indexed(tmp_path: Path, workspace: Path, url: str,
            notes: dict[str, str] = NOTES) -> psycopg.Connection:
    """The notes written and indexed into NS (in process, no daemon); an admin connection."""
    for rel, text in notes.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text, encoding="utf-8")
    run(tmp_path, workspace, url, "index")
    return psycopg.connect(url, autocommit=True)


def rows(conn: psycopg.Connection, ns: str) -> dict[str, list[tuple]]:
    return {
        "files": conn.execute("SELECT path, hash FROM openmemd.files WHERE ns = %s ORDER BY 1",
                              (ns,)).fetchall(),
        "chunks": conn.execute("SELECT id, path, text FROM openmemd.chunks WHERE ns = %s"
                               " ORDER BY 1", (ns,)).fetchall(),
        "stats": conn.execute("SELECT docs, tokens FROM openmemd.ns_stats WHERE ns = %s",
                              (ns,)).fetchall(),
        "lexemes": conn.execute("SELECT lexeme, docs FROM openmemd.ns_lexemes WHERE ns = %s"
                                " ORDER BY 1", (ns,)).fetchall(),
    }


def wait_for_row(conn: psycopg.Connection, sql: str, params: tuple, timeout: float):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = conn.execute(sql, params).fetchone()
        if row is not None:
            return row
        time.sleep(0.05)
    raise AssertionError(f"nothing for {sql!r} within {timeout} s")


def hold_the_swap(url: str) -> psycopg.Connection:
    """A connection holding one of the old index's lexeme rows: a rebuild's swap deletes the
    old rows table by table, ns_lexemes last, then renames the staging rows, so it waits here
    after every other old row is gone. Roll it back to let the swap go on."""
    blocker = psycopg.connect(url)
    blocker.execute("SELECT 1 FROM openmemd.ns_lexemes WHERE ns = %s LIMIT 1 FOR UPDATE", (NS,))
    return blocker


def wait_in_the_swap(admin: psycopg.Connection) -> int:
    """The pid of the writer's backend once it waits on `hold_the_swap`'s lock."""
    pid, query = wait_for_row(
        admin, "SELECT pid, query FROM pg_stat_activity WHERE application_name LIKE"
        " 'openmemd writer %%' AND wait_event_type = 'Lock'", (), 90)
    assert query.startswith("DELETE FROM openmemd.ns_lexemes"), query
    # the old files and chunks are deleted in the swap's open transaction by now
    assert admin.execute("SELECT count(*) FROM pg_locks WHERE pid = %s AND mode ="
                         " 'RowExclusiveLock' AND relation = 'openmemd.chunks'::regclass",
                         (pid,)).fetchone() == (1,)
    return int(pid)
