"""`openmemd index --force` on PostgreSQL killed with SIGKILL inside the rebuild's swap, after
the old index's rows were deleted in that transaction: the server rolls the swap back, so the
old index is there, row for row, and searchable; the next rebuild clears what the dead one left
in its staging namespace and finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from openmemd.store.postgres.store import STAGING_SUFFIX

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


def test_a_rebuild_killed_in_its_swap_keeps_the_old_index(tmp_path, workspace, pg_url):
    for rel, text in NOTES.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text, encoding="utf-8")
    run(tmp_path, workspace, pg_url, "index")
    admin = psycopg.connect(pg_url, autocommit=True)
    before = rows(admin, NS)
    assert len(before["files"]) == 2 and before["chunks"] and before["lexemes"]

    # The swap deletes the old rows table by table, ns_lexemes last, then renames the staging
    # rows; a lock on one of the old lexeme rows holds it after every other old row is gone.
    blocker = psycopg.connect(pg_url)
    blocker.execute("SELECT 1 FROM openmemd.ns_lexemes WHERE ns = %s LIMIT 1 FOR UPDATE", (NS,))
    proc = cli(tmp_path, workspace, pg_url, "index", "--force")
    try:
        pid, query = wait_for_row(
            admin, "SELECT pid, query FROM pg_stat_activity WHERE application_name LIKE"
            " 'openmemd writer %%' AND wait_event_type = 'Lock'", (), 90)
        assert query.startswith("DELETE FROM openmemd.ns_lexemes"), query
        # the old files and chunks are deleted in the swap's open transaction by now
        assert admin.execute("SELECT count(*) FROM pg_locks WHERE pid = %s AND mode ="
                             " 'RowExclusiveLock' AND relation = 'openmemd.chunks'::regclass",
                             (pid,)).fetchone() == (1,)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        blocker.rollback()  # the dead client's backend goes on, finds its client gone, aborts
        blocker.close()
    deadline = time.monotonic() + 30
    while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
        assert time.monotonic() < deadline, "the killed writer's backend is still there"
        time.sleep(0.05)

    assert rows(admin, NS) == before  # the swap rolled back: the old index, row for row
    assert "MEMORY.md" in run(tmp_path, workspace, pg_url, "search", "kestrel")
    staging = NS + STAGING_SUFFIX
    assert rows(admin, staging)["chunks"]  # what the killed rebuild built is still there

    run(tmp_path, workspace, pg_url, "index", "--force")
    after = rows(admin, NS)
    assert after == before  # the same Markdown, rebuilt: the same rows
    assert rows(admin, staging) == {"files": [], "chunks": [], "stats": [], "lexemes": []}
    assert "memory/2026-11-30.md" in run(tmp_path, workspace, pg_url, "search", "walrus")
    admin.close()
