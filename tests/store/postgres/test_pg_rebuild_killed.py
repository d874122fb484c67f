"""`openmemd index --force` on PostgreSQL killed with SIGKILL inside the rebuild's swap, after
the old index's rows were deleted in that transaction: the server rolls the swap back, so the
old index is there, row for row, and searchable; the next rebuild clears what the dead one left
in its staging namespace and finishes."""

from __future__ import annotations

import os
import signal
import time

from pg_cli import NS, cli, hold_the_swap, indexed, rows, run, wait_in_the_swap

from openmemd.store.postgres.store import STAGING_SUFFIX


def test_a_rebuild_killed_in_its_swap_keeps_the_old_index(tmp_path, workspace, pg_url):
    admin = indexed(tmp_path, workspace, pg_url)
    before = rows(admin, NS)
    assert len(before["files"]) == 2 and before["chunks"] and before["lexemes"]

    blocker = hold_the_swap(pg_url)
    proc = cli(tmp_path, workspace, pg_url, "index", "--force")
    try:
        pid = wait_in_the_swap(admin)
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
