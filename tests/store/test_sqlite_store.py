"""What only the SQLite backend does at the store boundary: its files on disk, damage found when
the writer opens, and SQLite's errors turned into the interface's."""

from __future__ import annotations

import os

import numpy as np
import pytest
from test_contract_writer import KEY, add_file, unit

from openmemd.store import open_store
from openmemd.store.base import DiskFullError, IndexDamagedError, StoreUnavailableError
from openmemd.store.sqlite import db, resident


@pytest.fixture
def settings(make_settings):
    return make_settings()


@pytest.fixture
def daemon_like():
    """A long-lived store turns on the process-wide resident vectors: off again after."""
    yield
    resident.enable(False)


def test_files_on_disk_are_openclaws_index_and_the_lock(settings) -> None:
    store = open_store(settings, "main")
    try:
        add_file(store.writer(), "memory/a.md", vectors=True)
        path = settings.index_path("main")
        assert store.location() == str(path) and store.exists()
        assert os.path.exists(f"{path}.lock")
        conn, _ = db.connect(path, readonly=True)
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        conn.close()
        assert {"meta", "files", "chunks", "embedding_cache", "chunks_fts", "chunks_vec",
                "idx_chunks_path", "idx_chunks_source",
                "idx_embedding_cache_updated_at"} <= names
        assert store.fts_tokenizer == "porter-unicode61+cjk-bi-uni-v1"
        mode = store.vector_mode()
        assert (mode.available, mode.mode) == (True, "sqlite-vec") and mode.version
        facts = store.status()
        assert facts["backend"] == "sqlite" and facts["path"] == str(path)
        assert facts["sqliteVec"] == mode.version
    finally:
        store.close()


def test_a_file_damaged_before_the_writer_opens_is_replaced_and_its_cache_salvaged(
        settings, daemon_like) -> None:
    store = open_store(settings, "main")
    add_file(store.writer(), "memory/a.md")
    with store.writer().transaction():
        store.writer().cache_store(KEY, [("h1", unit(1))], now_ms=1)
    store.close()
    path = settings.index_path("main")
    with open(path, "r+b") as fh:  # the schema page overwritten
        fh.seek(100)
        fh.write(os.urandom(3000))
    store = open_store(settings, "main", long_lived=True)
    try:
        with pytest.raises(IndexDamagedError) as info:
            store.writer()
        with pytest.raises(IndexDamagedError):  # until the caller heals
            store.writer()
        rec = store.heal(str(info.value))
        assert rec.reason == str(info.value)
        assert rec.moved_to and os.path.exists(rec.moved_to)
        w = store.writer()
        assert w.load_signatures() == {}
        assert rec.salvaged_vectors in (0, 1)  # what a broken page still gives
    finally:
        store.close()


def test_damage_met_by_a_write_is_index_damaged_and_heal_recovers(settings) -> None:
    store = open_store(settings, "main")
    try:
        w = store.writer()
        add_file(w, "memory/a.md")
        side, _ = db.connect(settings.index_path("main"))
        side.execute("DROP TABLE chunks_fts")  # a broken schema, as a bad disk leaves it
        side.close()
        with pytest.raises(IndexDamagedError, match="no such table"), w.transaction():
            w.replace_chunks("memory/a.md", [])
        store.heal("no such table: chunks_fts")
        add_file(store.writer(), "memory/a.md")
        assert set(store.writer().load_signatures()) == {"memory/a.md"}
    finally:
        store.close()


def test_a_full_database_is_disk_full_and_writes_resume(settings) -> None:
    store = open_store(settings, "main")
    try:
        w = store.writer()
        add_file(w, "memory/a.md")
        pages = w.conn.execute("PRAGMA page_count").fetchone()[0]
        w.conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL from here on
        big = [(f"h{i}", np.full(384, i, dtype=np.float32)) for i in range(300)]
        with pytest.raises(DiskFullError, match=r"disk full writing .*main\.sqlite"), \
                w.transaction():
            w.cache_store(KEY, big, now_ms=1)
        w.conn.execute("PRAGMA max_page_count = 1073741823")
        with w.transaction():
            w.cache_store(KEY, big, now_ms=1)
        assert len(w.cache_lookup(KEY, [h for h, _ in big])) == 300
    finally:
        store.close()


def test_other_database_failures_are_store_unavailable(settings) -> None:
    store = open_store(settings, "main")
    try:
        w = store.writer()
        other, _ = db.connect(settings.index_path("main"))
        other.execute("PRAGMA busy_timeout = 0")
        w.conn.execute("PRAGMA busy_timeout = 0")
        other.execute("BEGIN IMMEDIATE")  # a foreign writer that ignores the lock file
        try:
            with pytest.raises(StoreUnavailableError, match="locked"), w.transaction():
                pass
        finally:
            other.execute("ROLLBACK")
            other.close()
    finally:
        store.close()
