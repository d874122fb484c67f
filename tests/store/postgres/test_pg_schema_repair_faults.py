"""A schema repair that cannot finish, for real: killed half-way (`kill -9` of the process
repairing, while its repair waits on a lock), or out of disk space. The repair is one
transaction, so nothing of it stays, and the next process that opens the store (with space
back) repairs the whole and finds the index as it was."""

from __future__ import annotations

import time

import psycopg
from pg_cli import NS, cli, indexed, rows, run, wait_for_row

from helpers import fill_filesystem
from openmemd.store.postgres.schema import SCHEMA, missing_parts
from pg_server import on_a_small_disk


def test_a_repair_killed_half_way_leaves_nothing_and_the_next_one_finishes(
        tmp_path, workspace, pg_url):
    admin = indexed(tmp_path, workspace, pg_url)
    before = rows(admin, NS)
    assert before["stats"] and before["lexemes"]
    admin.execute(f"DROP TABLE {SCHEMA}.ns_stats; DROP TABLE {SCHEMA}.ns_lexemes")

    blocker = psycopg.connect(pg_url)  # the repair will wait here, inside its transaction
    blocker.execute(f"LOCK TABLE {SCHEMA}.chunks IN ACCESS EXCLUSIVE MODE")
    proc = cli(tmp_path, workspace, pg_url, "search", "kestrel")
    try:
        (pid,) = wait_for_row(
            admin, "SELECT a.pid FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid"
            " WHERE a.wait_event_type = 'Lock' AND l.locktype = 'advisory' AND l.granted",
            (), 90)  # waiting, with the schema's lock held: half-way through the repair
    finally:
        proc.kill()  # SIGKILL: no rollback from the client side
        proc.wait(30)
    blocker.rollback()
    blocker.close()
    deadline = time.monotonic() + 30  # its backend ends at its next word to the dead client
    while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
        assert time.monotonic() < deadline, "the killed repair's backend is still there"
        time.sleep(0.05)

    assert {"ns_stats", "ns_lexemes"} <= set(missing_parts(admin))  # nothing of it stayed
    out = run(tmp_path, workspace, pg_url, "search", "kestrel")
    assert "MEMORY.md" in out
    assert rows(admin, NS) == before  # counted again from the chunks, as they were
    assert missing_parts(admin) == []
    admin.close()


def test_a_repair_that_meets_a_full_disk_leaves_nothing_and_finishes_later(tmp_path, workspace):
    with on_a_small_disk() as (url, space):
        admin = indexed(tmp_path, workspace, url)
        before = rows(admin, NS)
        admin.execute(f"DROP TABLE {SCHEMA}.ns_stats; DROP TABLE {SCHEMA}.ns_lexemes;"
                      f" DROP INDEX {SCHEMA}.chunks_fts")
        fill_filesystem(space / "filler")
        proc = cli(tmp_path, workspace, url, "search", "kestrel")
        out, err = proc.communicate(timeout=120)
        # one clear line (after the catch-up's own), no traceback, nothing answered
        assert proc.returncode != 0 and "MEMORY.md" not in out
        assert "out of disk space" in err and "Traceback" not in err, err
        assert {"ns_stats", "ns_lexemes", "chunks_fts"} <= set(missing_parts(admin))
        (space / "filler").unlink()  # space returns
        assert "MEMORY.md" in run(tmp_path, workspace, url, "search", "kestrel")
        assert rows(admin, NS) == before
        assert missing_parts(admin) == []
        admin.close()
