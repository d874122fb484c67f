"""`openmemd index --force` on PostgreSQL whose server disk fills up during the rebuild's swap
(renaming every staging row writes a new version of it), for real: the database lives in a
tablespace on a small tmpfs. The swap rolls back, so the old index stays, row for row, and is
searched; the rebuild says why it failed and removes its staging rows (the space they hold is
what is missing); a search meanwhile says it cannot bring the index up to date and answers from
what is stored; once space returns the next rebuild finishes."""

from __future__ import annotations

import random

from pg_cli import NOTES, NS, cli, hold_the_swap, indexed, rows, run, wait_in_the_swap

from helpers import fill_filesystem
from openmemd.store.postgres.store import STAGING_SUFFIX
from pg_server import on_a_small_disk

FULL = "out of disk space"
EMPTY = {"files": [], "chunks": [], "stats": [], "lexemes": []}


def notes() -> dict[str, str]:
    # enough distinct text that its rows' new versions cannot fit in the pages' free space
    rng = random.Random(7)
    words = [f"{a}{b}" for a in ("kest", "wal", "nar", "os", "pel", "her") for b in
             ("rel", "rus", "whal", "prey", "ican", "on", "bit", "dax", "mo", "ler")]
    days = {f"memory/2026-10-{d:02d}.md": "\n".join(
        " ".join(rng.choice(words) + str(rng.randrange(999)) for _ in range(14))
        for _ in range(12)) + "\n" for d in range(1, 31)}
    return {**NOTES, **days}


def test_a_rebuild_whose_swap_meets_a_full_disk_keeps_the_old_index(tmp_path, workspace):
    with on_a_small_disk() as (url, space):
        admin = indexed(tmp_path, workspace, url, notes())
        before = rows(admin, NS)
        assert len(before["files"]) == 32

        blocker = hold_the_swap(url)
        proc = cli(tmp_path, workspace, url, "index", "--force")
        try:
            wait_in_the_swap(admin)  # the staging rows are all written
            fill_filesystem(space / "filler")
        finally:
            blocker.rollback()
            blocker.close()
        _, err = proc.communicate(timeout=120)
        assert proc.returncode != 0 and FULL in err and "Traceback" not in err, err

        assert rows(admin, NS) == before  # the swap rolled back: the old index, row for row
        assert rows(admin, NS + STAGING_SUFFIX) == EMPTY  # and the rebuild's rows are gone
        # A search without a daemon first catches the index up with a new note; with no space
        # for it, it says so and searches what is stored. (The note is larger than a page: a
        # row or two can still find room in the table's last page.)
        words = " ".join(notes().values()).split()
        heron = "The heron left on Sunday.\n" + "".join(
            f"Heron note {i}: {' '.join(words[i * 40:i * 40 + 40])}\n" for i in range(300))
        (workspace / "memory" / "2026-11-29.md").write_text(heron)
        search = cli(tmp_path, workspace, url, "search", "kestrel")
        out, err = search.communicate(timeout=120)
        assert search.returncode == 0 and "MEMORY.md" in out, err
        assert "searching the index as it is" in err and FULL in err, err

        (space / "filler").unlink()  # space returns
        assert "memory/2026-11-29.md" in run(tmp_path, workspace, url, "search", "heron")
        run(tmp_path, workspace, url, "index", "--force")
        after = rows(admin, NS)
        assert [p for p, _ in after["files"]] == sorted(
            [p for p, _ in before["files"]] + ["memory/2026-11-29.md"])
        assert set(before["chunks"]) < set(after["chunks"])
        assert rows(admin, NS + STAGING_SUFFIX) == EMPTY
        admin.close()
