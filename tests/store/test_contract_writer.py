"""The writing half of the store contract (`store.base.StoreWriter`, `IndexStore.rebuild`,
`heal`, the writer lock), run against every backend in conftest.BACKENDS."""

from __future__ import annotations

import numpy as np
import pytest

from openmemd.errors import IndexLockedError
from openmemd.store.base import (
    CacheKey,
    ChunkRow,
    FileSignature,
    IndexStore,
    PendingChunk,
    RowRejectedError,
    Skipped,
    StoreWriter,
)
from openmemd.text.tokens import fts_index_text

MODEL = "test-model"
KEY = CacheKey("test-provider", MODEL, "key-1")
DIMS = 8


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIMS).astype(np.float32)
    return v / np.linalg.norm(v)


def chunk(path: str, n: int, vector: np.ndarray | None = None, text: str = "") -> ChunkRow:
    text = text or f"note {n} of {path} about walruses"
    return ChunkRow(id=f"{path}#{n}", path=path, source="memory", start_line=n * 10 + 1,
                    end_line=n * 10 + 9, hash=f"h-{path}-{n}", model=MODEL, text=text,
                    fts_text=fts_index_text(text), vector=vector, updated_at=1_700_000_000_000)


def add_file(w: StoreWriter, path: str, chunks: int = 2, *, vectors: bool = False) -> None:
    with w.transaction():
        w.replace_chunks(path, [chunk(path, i, unit(i) if vectors else None)
                                for i in range(chunks)])
        w.upsert_file(path, "memory", f"hash-{path}", 1000, 10 * chunks, 5, 42)


def pending_ids(w: StoreWriter) -> set[str]:
    return {p.id for p in w.pending_vectors(MODEL, 1000)}


# -- files ------------------------------------------------------------------------------------

def test_files_and_their_signatures(store: IndexStore) -> None:
    w = store.writer()
    assert w.load_signatures() == {}
    assert w.file_hash("MEMORY.md") is None
    with w.transaction():
        w.upsert_file("MEMORY.md", "memory", "abc", 1000, 12, 111, 7)
        w.upsert_file("sessions/a.jsonl", "sessions", "def", 2000, 34, 222, 8)
    assert w.load_signatures() == {
        "MEMORY.md": FileSignature("MEMORY.md", "memory", 1000, 12, 111, 7),
        "sessions/a.jsonl": FileSignature("sessions/a.jsonl", "sessions", 2000, 34, 222, 8)}
    assert w.file_hash("MEMORY.md") == "abc"
    with w.transaction():
        w.touch_file("MEMORY.md", 3000, 13, 333, 9)
        w.upsert_file("sessions/a.jsonl", "sessions", "ghi", 4000, 35, 444, 10)
    sigs = w.load_signatures()
    assert sigs["MEMORY.md"] == FileSignature("MEMORY.md", "memory", 3000, 13, 333, 9)
    assert sigs["sessions/a.jsonl"].mtime == 4000
    assert w.file_hash("MEMORY.md") == "abc" and w.file_hash("sessions/a.jsonl") == "ghi"
    with w.transaction():
        w.delete_file("MEMORY.md")
    assert set(w.load_signatures()) == {"sessions/a.jsonl"}
    assert w.file_hash("MEMORY.md") is None


def test_what_was_written_is_there_for_the_next_process(store: IndexStore, open_another
                                                        ) -> None:
    add_file(store.writer(), "memory/a.md")
    with store.writer().transaction():
        store.writer().write_meta({"model": MODEL, "chunkTokens": 400})
    store.close()
    again = open_another().writer()
    assert set(again.load_signatures()) == {"memory/a.md"}
    assert again.read_meta() == {"model": MODEL, "chunkTokens": 400}
    assert pending_ids(again) == {"memory/a.md#0", "memory/a.md#1"}


# -- chunks and vectors -----------------------------------------------------------------------

def test_replace_chunks_replaces_every_chunk_of_the_file_only(store: IndexStore) -> None:
    w = store.writer()
    add_file(w, "memory/a.md", 3)
    add_file(w, "memory/b.md", 2)
    assert w.count_pending_vectors(MODEL) == 5
    with w.transaction():
        w.replace_chunks("memory/a.md", [chunk("memory/a.md", 7)])
    assert pending_ids(w) == {"memory/a.md#7", "memory/b.md#0", "memory/b.md#1"}
    with w.transaction():
        w.replace_chunks("memory/a.md", [])
    assert pending_ids(w) == {"memory/b.md#0", "memory/b.md#1"}
    with w.transaction():
        w.delete_file("memory/b.md")
    assert w.count_pending_vectors(MODEL) == 0
    assert w.count_pending_vectors("another-model") == 0
    # a path new to the index, replaced twice before its file row exists
    assert "memory/c.md" not in w.load_signatures()
    with w.transaction():
        w.replace_chunks("memory/c.md", [chunk("memory/c.md", 0), chunk("memory/c.md", 1)])
        w.replace_chunks("memory/c.md", [chunk("memory/c.md", 2)])
    with w.transaction():
        w.replace_chunks("memory/c.md", [chunk("memory/c.md", 3)])
        w.upsert_file("memory/c.md", "memory", "c", 1, 1, 1, 1)
    assert pending_ids(w) == {"memory/c.md#3"}


def test_pending_chunks_get_their_vectors(store: IndexStore) -> None:
    w = store.writer()
    add_file(w, "memory/a.md", 3)
    add_file(w, "memory/b.md", 1, vectors=True)  # stored with its vector: not pending
    pending = w.pending_vectors(MODEL, 1000)
    assert sorted(pending) == [
        PendingChunk(f"memory/a.md#{i}", f"h-memory/a.md-{i}", f"note {i} of memory/a.md "
                     "about walruses") for i in range(3)]
    assert len(w.pending_vectors(MODEL, 2)) == 2
    assert w.pending_vectors("another-model", 10) == []
    shared = unit(5)
    with w.transaction():
        w.set_vectors([("memory/a.md#0", shared), ("memory/a.md#1", shared),
                       ("no-such-chunk", unit(6))])
    assert pending_ids(w) == {"memory/a.md#2"}
    with w.transaction():
        w.set_vectors([("memory/a.md#2", unit(7))])
    assert w.count_pending_vectors(MODEL) == 0
    # a replaced file's chunks wait again, and deleting it leaves nothing behind
    with w.transaction():
        w.replace_chunks("memory/a.md", [chunk("memory/a.md", 0)])
    assert pending_ids(w) == {"memory/a.md#0"}


def test_the_fill_asks_for_pending_work_by_file(store: IndexStore) -> None:
    """The fill orders its work by file (store.base.PendingFile) and then asks for the chunks of
    the files it chose, in that order; derived files (dreaming's reports) wait only when asked."""
    w = store.writer()
    add_file(w, "memory/old.md", 2)
    add_file(w, "MEMORY.md", 1)
    add_file(w, "memory/done.md", 2, vectors=True)
    add_file(w, "memory/dreaming/deep/2026-07-03.md", 3)
    assert sorted(w.pending_files(MODEL)) == [
        ("MEMORY.md", "memory", 1), ("memory/dreaming/deep/2026-07-03.md", "memory", 3),
        ("memory/old.md", "memory", 2)]
    assert sorted(w.pending_files(MODEL, derived=False)) == [
        ("MEMORY.md", "memory", 1), ("memory/old.md", "memory", 2)]
    assert w.count_pending_vectors(MODEL, derived=False) == 3
    assert w.pending_files("another-model") == []
    # chunks of the named files only, in the order named, each file's chunks in line order
    chosen = w.pending_vectors(MODEL, 10, paths=["memory/old.md", "MEMORY.md", "memory/done.md"])
    assert [p.id for p in chosen] == ["memory/old.md#0", "memory/old.md#1", "MEMORY.md#0"]
    assert [p.id for p in w.pending_vectors(MODEL, 2, paths=["MEMORY.md", "memory/old.md"])] \
        == ["MEMORY.md#0", "memory/old.md#0"]
    assert w.pending_vectors(MODEL, 10, paths=["memory/none.md"]) == []


def test_a_vector_of_a_new_size_is_accepted_after_a_rebuild(store: IndexStore) -> None:
    add_file(store.writer(), "memory/a.md", 1, vectors=True)

    def build(w: StoreWriter) -> None:
        with w.transaction():
            row = chunk("memory/a.md", 0, np.ones(DIMS * 2, dtype=np.float32) / 4)
            w.replace_chunks("memory/a.md", [row])
            w.upsert_file("memory/a.md", "memory", "x", 1, 2, 3, 4)

    store.rebuild(build)
    assert store.writer().count_pending_vectors(MODEL) == 0


# -- the embedding cache ----------------------------------------------------------------------

def test_embedding_cache_lookup_store_and_prune(store: IndexStore) -> None:
    w = store.writer()
    assert w.cache_lookup(KEY, ["h1", "h2"]) == {}
    assert w.cache_lookup(KEY, []) == {}
    with w.transaction():
        w.cache_store(KEY, [("h1", unit(1)), ("h2", unit(2))], now_ms=1000)
        w.cache_store(KEY, [("h3", unit(3))], now_ms=3000)
    found = w.cache_lookup(KEY, ["h1", "h2", "h9", "h1"])
    assert set(found) == {"h1", "h2"}
    assert found["h1"].dtype == np.float32
    np.testing.assert_array_equal(found["h1"], unit(1))  # float32 round-trips exactly
    assert w.cache_lookup(CacheKey("other", MODEL, "key-1"), ["h1"]) == {}
    assert w.cache_lookup(CacheKey(KEY.provider, MODEL, "key-2"), ["h1"]) == {}
    with w.transaction():  # refreshed: h1 is now the newest
        w.cache_store(KEY, [("h1", unit(11))], now_ms=5000)
    np.testing.assert_array_equal(w.cache_lookup(KEY, ["h1"])["h1"], unit(11))
    with w.transaction():
        assert w.cache_prune(0) == 0  # no cap
        assert w.cache_prune(10) == 0
        assert w.cache_prune(2) == 1  # the least recently written: h2
    assert set(w.cache_lookup(KEY, ["h1", "h2", "h3"])) == {"h1", "h3"}


# -- meta and bookkeeping ---------------------------------------------------------------------

def test_meta_round_trips(store: IndexStore) -> None:
    w = store.writer()
    assert w.read_meta() is None
    meta = {"model": MODEL, "sources": ["memory", "sessions"], "vectorDims": 384}
    with w.transaction():
        w.write_meta(meta)
    assert w.read_meta() == meta
    with w.transaction():
        w.write_meta({"model": "other"})
    assert w.read_meta() == {"model": "other"}


def test_skipped_files_are_remembered_by_their_raw_name(store: IndexStore) -> None:
    w = store.writer()
    assert w.load_skipped() == {} and store.reader().skipped_files() == []
    odd = b"memory/caf\xe9.md"  # not UTF-8
    one = Skipped(("memory", 1000, 12, 111, 7), "memory/caf\\xe9.md", "not UTF-8")
    two = Skipped(("memory", 2000, 5, 222, 8), "memory/big.md", "too large")
    with w.transaction():
        w.set_skipped(odd, one)
        w.set_skipped(b"memory/big.md", two)
    assert w.load_skipped() == {odd: one, b"memory/big.md": two}
    with w.transaction():
        w.delete_skipped(odd)
        w.set_skipped(b"memory/big.md", two._replace(reason="still too large"))
    assert w.load_skipped() == {b"memory/big.md": two._replace(reason="still too large")}
    assert store.reader().skipped_files() == [two._replace(reason="still too large")]


# -- transactions -----------------------------------------------------------------------------

def test_a_failed_transaction_leaves_nothing_behind(store: IndexStore, open_another) -> None:
    w = store.writer()
    add_file(w, "memory/a.md")
    with pytest.raises(RuntimeError, match="boom"), w.transaction():
        w.replace_chunks("memory/a.md", [chunk("memory/a.md", 9)])
        w.upsert_file("memory/a.md", "memory", "new", 9999, 1, 1, 1)
        w.upsert_file("memory/b.md", "memory", "b", 1, 1, 1, 1)
        w.set_skipped(b"memory/c.md", Skipped(("memory", 1, 1, 1, 1), "memory/c.md", "x"))
        w.write_meta({"model": "half-written"})
        raise RuntimeError("boom")
    assert w.load_signatures() == {
        "memory/a.md": FileSignature("memory/a.md", "memory", 1000, 20, 5, 42)}
    assert w.file_hash("memory/a.md") == "hash-memory/a.md"
    assert pending_ids(w) == {"memory/a.md#0", "memory/a.md#1"}
    assert w.load_skipped() == {} and w.read_meta() is None
    store.close()
    again = open_another().writer()
    assert set(again.load_signatures()) == {"memory/a.md"}
    assert pending_ids(again) == {"memory/a.md#0", "memory/a.md#1"}


def test_rows_the_backend_refuses_are_a_row_rejected_error(store: IndexStore) -> None:
    w = store.writer()
    add_file(w, "memory/a.md")
    duplicate = [chunk("memory/b.md", 0), chunk("memory/b.md", 0)]  # the same id twice
    with pytest.raises(RowRejectedError), w.transaction():
        w.replace_chunks("memory/b.md", duplicate)
        w.upsert_file("memory/b.md", "memory", "b", 1, 1, 1, 1)
    # only that write is lost; the writer goes on
    assert set(w.load_signatures()) == {"memory/a.md"}
    add_file(w, "memory/c.md")
    assert set(w.load_signatures()) == {"memory/a.md", "memory/c.md"}


# -- rebuild, heal, lock ----------------------------------------------------------------------

def test_a_rebuild_that_fails_keeps_the_old_index(store: IndexStore) -> None:
    w = store.writer()
    add_file(w, "memory/a.md")
    with w.transaction():
        w.write_meta({"model": "old"})

    assert set(store.reader().stored_files()) == {"memory/a.md"}

    def build(fresh: StoreWriter) -> None:
        assert fresh.load_signatures() == {}
        add_file(fresh, "memory/new.md")
        assert set(store.reader().stored_files()) == {"memory/a.md"}  # readers: the old one
        raise RuntimeError("embedding provider went away")

    with pytest.raises(RuntimeError, match="went away"):
        store.rebuild(build)
    w = store.writer()
    assert set(w.load_signatures()) == {"memory/a.md"}
    assert w.read_meta() == {"model": "old"}
    assert pending_ids(w) == {"memory/a.md#0", "memory/a.md#1"}
    assert set(store.reader().stored_files()) == {"memory/a.md"}
    assert store.reader().read_meta() == {"model": "old"}


def test_a_rebuild_replaces_the_index_and_keeps_the_cache(store: IndexStore) -> None:
    w = store.writer()
    add_file(w, "memory/a.md")
    with w.transaction():
        w.write_meta({"model": "old"})
        w.cache_store(KEY, [("h1", unit(1))], now_ms=1000)

    before = store.reader()
    assert set(before.stored_files()) == {"memory/a.md"}

    def build(fresh: StoreWriter) -> str:
        assert fresh.load_signatures() == {} and fresh.read_meta() is None
        cached = fresh.cache_lookup(KEY, ["h1"])  # carried over: nothing is embedded again
        np.testing.assert_array_equal(cached["h1"], unit(1))
        with fresh.transaction():
            fresh.write_meta({"model": "new"})
        add_file(fresh, "memory/new.md", 1, vectors=True)
        return "built"

    assert store.rebuild(build) == "built"
    reader = store.reader()  # this thread's reader, now on the new index
    assert set(reader.stored_files()) == {"memory/new.md"}
    assert reader.read_meta() == {"model": "new"}
    stats = reader.stats(MODEL)
    assert (stats.files, stats.chunks, stats.pending_vectors) == (1, 1, 0)
    w = store.writer()
    assert set(w.load_signatures()) == {"memory/new.md"}
    assert w.read_meta() == {"model": "new"}
    assert w.count_pending_vectors(MODEL) == 0
    assert set(w.cache_lookup(KEY, ["h1"])) == {"h1"}
    add_file(w, "memory/after.md")  # the new index takes writes
    assert set(w.load_signatures()) == {"memory/new.md", "memory/after.md"}


def test_heal_gives_an_empty_index_with_the_cache_salvaged(store: IndexStore) -> None:
    w = store.writer()
    add_file(w, "memory/a.md")
    with w.transaction():
        w.write_meta({"model": "old"})
        w.cache_store(KEY, [("h1", unit(1)), ("h2", unit(2))], now_ms=1000)
    rec = store.heal("test: pretend damage")
    assert rec.reason == "test: pretend damage"
    assert rec.salvaged_vectors == 2
    w = store.writer()
    assert w.load_signatures() == {} and w.read_meta() is None
    assert w.count_pending_vectors(MODEL) == 0
    assert store.reader().stored_files() == {}
    assert set(w.cache_lookup(KEY, ["h1", "h2"])) == {"h1", "h2"}
    assert store.damage() == ""
    add_file(w, "memory/a.md")  # refilled from the Markdown by the caller
    assert set(w.load_signatures()) == {"memory/a.md"}


def test_a_second_writer_of_the_same_index_is_refused(store: IndexStore, open_another) -> None:
    store.writer()
    other = open_another()
    with pytest.raises(IndexLockedError, match="another openmemd process"):
        other.writer()
    store.close()
    add_file(other.writer(), "memory/a.md")  # free once the first one closed
    assert set(other.writer().load_signatures()) == {"memory/a.md"}


def test_readers_see_a_write_only_once_it_commits(store: IndexStore) -> None:
    w = store.writer()
    add_file(w, "memory/a.md")
    reader = store.reader()
    with w.transaction():
        w.replace_chunks("memory/b.md", [chunk("memory/b.md", 0)])
        w.upsert_file("memory/b.md", "memory", "b", 1, 1, 1, 1)
        assert set(reader.stored_files()) == {"memory/a.md"}
        assert reader.stats(MODEL).chunks == 2
    assert set(reader.stored_files()) == {"memory/a.md", "memory/b.md"}
    assert reader.stats(MODEL).chunks == 3
    assert reader.file_mtimes(["memory/b.md", "nope.md"]) == {"memory/b.md": 1}
