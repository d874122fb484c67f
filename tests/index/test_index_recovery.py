"""A damaged, deleted or full index heals itself; killed rebuilds leave nothing behind.

Real SQLite files damaged the way disks and users damage them: truncated, a third overwritten
with junk, deleted under a running writer, a database that runs out of pages.
"""

from __future__ import annotations

import json
import os
import threading
import traceback

import pytest

from helpers import wait_for
from openmemd.api import MemoryIndex
from openmemd.errors import IndexLockedError, UnavailableError
from openmemd.store.sqlite import db

NOTES = 30
CACHE_ROWS = 1500


def write_notes(workspace, count=NOTES):
    for i in range(count):
        (workspace / "memory" / f"2026-01-{i:03d}.md").write_text(
            f"# Day {i}\n\nWe talked about topic number {i} and the word zebra{i}.\n" * 20)
    (workspace / "MEMORY.md").write_text("The launch codeword is pelican.\n")


def fill_cache(index, rows=CACHE_ROWS):
    """Embedding-cache rows as a provider would leave them (salvage needs no model)."""
    vector = json.dumps([0.5] * 16)
    conn, _ = db.connect(index.db_path)
    with db.write_transaction(conn):
        conn.executemany("INSERT INTO embedding_cache VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [("p", "m", "k", f"hash{i:06d}", vector, 16, i) for i in range(rows)])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def truncate(path):
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)


def overwrite_middle(path):
    # The middle third (the embedding cache here, partly salvaged) and the pages of `chunks`,
    # which a search reads: whether the middle third alone reaches one depends on the page
    # layout (one more index page moved the last one out of it).
    conn, _ = db.connect(path, readonly=True)
    try:
        chunk_pages = [r[0] for r in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = 'chunks' AND pagetype = 'leaf'")]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.seek(size // 3)
        fh.write(os.urandom(size // 3))
        for page in chunk_pages:
            fh.seek((page - 1) * page_size)
            fh.write(os.urandom(page_size))


def cache_count(index):
    conn, _ = db.connect(index.db_path, readonly=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0]
    finally:
        conn.close()


@pytest.fixture
def built(make_settings, workspace):
    settings = make_settings()
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        fill_cache(index)  # first: in the pages a truncation keeps
        write_notes(workspace)
        index.sync()
        path = index.db_path
    return settings, workspace, path


@pytest.mark.parametrize("damage", [truncate, overwrite_middle], ids=["truncated", "junk"])
def test_damaged_index_is_moved_aside_rebuilt_and_its_cache_salvaged(built, damage):
    settings, workspace, path = built
    damage(path)
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        assert index.search("pelican")[0].path == "MEMORY.md"
        assert index.search("zebra7")[0].path == "memory/2026-01-007.md"
        st = index.status()
        rec = st.recovery
        assert rec is not None and rec["movedTo"] and rec["reason"] and not rec["rebuilding"]
        assert 0 < rec["salvagedEmbeddings"] <= CACHE_ROWS
        assert cache_count(index) == rec["salvagedEmbeddings"]
        assert st.index_error is None
    assert len(list(path.parent.glob("main.sqlite.corrupt-*[0-9]"))) == 1


def test_index_force_rebuild_over_a_damaged_index_works(built):
    settings, workspace, path = built
    overwrite_middle(path)
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync(force=True)
        assert index.search("zebra3")[0].path == "memory/2026-01-003.md"


def test_index_deleted_under_a_running_writer_is_rebuilt_and_never_recreated_by_a_reader(
        built):
    settings, workspace, path = built
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        assert index.search("pelican")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(f"{path}{suffix}"):
                os.unlink(f"{path}{suffix}")
        asked = []
        index.on_damage = asked.append
        index.store._generation += 1  # a fresh reader thread, as in the daemon's worker pool
        with pytest.raises(UnavailableError, match="rebuilt from the Markdown"):
            index.search("pelican")
        assert asked and not path.exists()  # the reader asked for a rebuild, created nothing
        index.sync()
        assert index.search("pelican")[0].path == "MEMORY.md"
        rec = index.status().recovery
        assert rec is not None and rec["reason"] == "index file deleted"
        # The writer still had the deleted file open: the whole cache was saved.
        assert rec["salvagedEmbeddings"] == CACHE_ROWS


def test_quick_check_keeps_a_sound_index(built):
    settings, workspace, path = built
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        assert index.status().recovery is None
    assert not list(path.parent.glob("*.corrupt-*"))


def test_killed_rebuild_leftovers_are_removed_by_the_next_writer(built):
    settings, workspace, path = built
    leftovers = [path.with_name(f"{path.name}.tmp-0123456789ab{s}")
                 for s in ("", "-wal", "-shm", "-journal")]
    leftovers.append(path.with_name(f"{path.name}.backup-0123456789ab"))
    for p in leftovers:
        p.write_bytes(b"x" * 4096)
    with MemoryIndex.open(workspace, config=settings) as writer:
        writer.sync()
        assert not [p for p in leftovers if p.exists()]
        # While a writer holds the lock another process never touches its temp files.
        busy = path.with_name(f"{path.name}.tmp-busybusybusy")
        busy.write_bytes(b"being built")
        with MemoryIndex.open(workspace, config=settings) as other, \
                pytest.raises(IndexLockedError):
            other.sync()
        assert busy.exists()


def test_full_database_is_a_clear_unavailable_error_and_recovers(make_settings, workspace):
    (workspace / "MEMORY.md").write_text("hello\n")
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        index.sync()
        conn = index.store.writer().conn  # SQLite's own connection: a full disk on demand
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL from here on
        (workspace / "memory" / "big.md").write_text("walrus facts\n" + "filler text\n" * 4000)
        with pytest.raises(UnavailableError, match=r"disk full writing .*main\.sqlite") as info:
            index.sync()
        assert info.value.code == "unavailable"
        conn.execute("PRAGMA max_page_count = 1073741823")
        index.sync()
        assert index.search("walrus")[0].path == "memory/big.md"


def test_daemon_indexer_retries_a_full_disk_until_space_returns(make_settings, workspace):
    from openmemd.server.indexer import Indexer

    (workspace / "MEMORY.md").write_text("hello\n")
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        index.sync()
        conn = index.store.writer().conn  # SQLite's own connection: a full disk on demand
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        indexer = Indexer(index, name="main")
        indexer.start()
        try:
            (workspace / "memory" / "big.md").write_text("walrus\n" + "filler text\n" * 4000)
            indexer.request_reconcile("edit")
            assert wait_for(lambda: "disk full" in (indexer.status().last_error or ""), 30)
            assert wait_for(lambda: indexer.status().retry is not None, 10)
            conn.execute("PRAGMA max_page_count = 1073741823")  # space returns
            assert wait_for(lambda: any(h.path == "memory/big.md"
                                        for h in index.search("walrus")), 30)
            assert wait_for(lambda: indexer.status().last_error is None, 10)
        finally:
            indexer.stop()


def test_concurrent_searches_during_a_rebuild_never_fail_internally(built):
    settings, workspace, path = built
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        errors: list[str] = []
        stop = threading.Event()

        def search() -> None:
            while not stop.is_set():
                try:
                    index.search("pelican")
                except UnavailableError:
                    pass
                except BaseException as exc:  # anything else would answer `internal`
                    errors.append(f"{exc!r}\n{traceback.format_exc()}")

        threads = [threading.Thread(target=search) for _ in range(2)]
        for t in threads:
            t.start()
        try:
            os.unlink(path)
            index.sync()
            assert wait_for(lambda: bool(index.search("pelican")), 10)
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert not errors, "\n".join(errors)


@pytest.mark.parametrize("damage", [truncate, overwrite_middle], ids=["truncated", "junk"])
def test_one_shot_search_on_a_damaged_index_heals_it_and_answers(built, damage):
    settings, workspace, path = built
    damage(path)
    with MemoryIndex.open(workspace, config=settings) as index:
        assert index.search("zebra7")[0].path == "memory/2026-01-007.md"
        assert index.search("pelican")[0].path == "MEMORY.md"


def test_only_the_newest_corrupt_copies_are_kept(built):
    from openmemd.store.sqlite import health

    settings, workspace, path = built
    for _ in range(3):  # three incidents
        overwrite_middle(path)
        with MemoryIndex.open(workspace, config=settings) as index:
            index.on_damage = lambda reason: None
            index.store.long_lived = True  # as in the daemon: the full check at open
            index.sync()
            rec = index.status().recovery
            assert rec is not None and rec["movedTo"]
    kept = [p for p in path.parent.glob("main.sqlite.corrupt-*")
            if not p.name.endswith(("-wal", "-shm", "-journal"))]
    assert len(kept) == health.KEEP_CORRUPT


def test_a_short_read_of_a_truncated_file_is_damage_but_a_full_disk_is_not() -> None:
    # sqlite-vec's reads past the end of a truncated index report a plain "disk I/O error"
    # (seen in bench/faults.py with a 2 MB index with vectors): that is damage to rebuild,
    # where a full disk is retried instead.
    from openmemd.store.sqlite import db as store_db
    from openmemd.store.sqlite import health as store_health

    error = store_db.DatabaseError[0]  # the driver's own DatabaseError class
    short_read, full = error("disk I/O error"), error("database or disk is full")
    assert store_health.is_damage(short_read)
    assert not store_health.is_damage(full)
    assert store_health.is_disk_full(full)
