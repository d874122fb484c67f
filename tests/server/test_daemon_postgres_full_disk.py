"""The database server's disk fills up under a running daemon, for real: the database lives in
a tablespace on a tiny tmpfs. The daemon keeps serving what is stored, says why writes fail,
answers a sync `unavailable` with that reason, and converges once space returns; the Markdown
is untouched throughout."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from daemon_harness import DEBOUNCE_MS, daemon_problems, finds, make_daemon
from helpers import fill_filesystem, wait_for
from openmemd.client import RemoteUnavailable
from pg_server import on_a_small_disk

daemon = contextmanager(make_daemon)
NOTE = "The launch codeword is pelican.\n"
FULL = "out of disk space"


@pytest.fixture
def server_on_a_small_disk():
    with on_a_small_disk() as url_and_space:
        yield url_and_space


def test_a_full_disk_on_the_server_is_reported_and_converges(server_on_a_small_disk):
    url, space = server_on_a_small_disk
    config = (f'[embedding]\nprovider = "none"\n[sync]\nwatch_debounce_ms = {DEBOUNCE_MS}\n'
              f'[store]\nbackend = "postgres"\nurl = "{url}"\nnamespace = "team/full"\n')
    with daemon(config) as d:
        (d.workspace / "MEMORY.md").write_text(NOTE)
        d.start()
        assert wait_for(finds(d, "pelican", "MEMORY.md", []), 60)

        filler = space / "filler"
        fill_filesystem(filler)
        note = d.workspace / "memory" / "full.md"
        text = "The narwhal note was written while the disk was full.\n" * 400
        note.write_text(text)
        assert wait_for(lambda: any(FULL in p for p in daemon_problems(d)), 60), \
            daemon_problems(d)
        # what is stored is still served, and a sync says why it cannot write
        assert wait_for(finds(d, "pelican", "MEMORY.md", []), 10)
        with pytest.raises(RemoteUnavailable, match=FULL), d.client() as c:
            c.sync(wait=True)
        assert note.read_text() == text and (d.workspace / "MEMORY.md").read_text() == NOTE

        filler.unlink()  # space returns
        assert wait_for(finds(d, "narwhal", "memory/full.md", []), 60)
        assert wait_for(lambda: not daemon_problems(d), 30), daemon_problems(d)
        status = d.cli("status")
        assert status.returncode == 0 and "Traceback" not in status.stderr
