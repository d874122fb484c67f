"""What only the SQLite backend does at the store boundary: its files on disk, damage found when
the writer opens, and SQLite's errors turned into the interface's."""

from __future__ import annotations

import dataclasses
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


def test_keyword_relevance_by_rowid_matches_the_exact_lookup_even_when_rows_are_misaligned(
        settings) -> None:
    # The relevance of given chunks is read by rowid (fast); an index whose keyword rows do
    # not share their chunk's rowid (written by another tool) must still get exact answers.
    from test_contract_writer import chunk

    from openmemd.store.sqlite.fts import build_match, keyword_relevance
    from openmemd.text.tokens import query_terms

    store = open_store(settings, "main")
    try:
        add_file(store.writer(), "memory/a.md", chunks=3)  # "... about walruses"
        w = store.writer()
        with w.transaction():
            w.replace_chunks("memory/p.md", [chunk("memory/p.md", 0, text="penguins only")])
            w.upsert_file("memory/p.md", "memory", "hash-p", 1000, 10, 5, 43)
        conn, _ = db.connect(settings.index_path("main"))
        terms = query_terms("walruses")
        rowid_of = {cid: r for r, cid in conn.execute("SELECT rowid, id FROM chunks")}
        walrus, penguin = "memory/a.md#0", "memory/p.md#0"

        def exact() -> dict[str, float]:
            return {cid: -rank for cid, rank in conn.execute(
                "SELECT id, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?",
                [build_match(terms)])}

        want = exact()
        assert sorted(want) == ["memory/a.md#0", "memory/a.md#1", "memory/a.md#2"]
        assert keyword_relevance(conn, terms, list(rowid_of)) == want
        # Misalign: a walrus chunk's keyword row and a penguin chunk's swap rowids.
        cols = "text, id, path, source, model, start_line, end_line"
        rows = {r[0]: r[1:] for r in conn.execute(f"SELECT rowid, {cols} FROM chunks_fts")}
        a, b = rowid_of[walrus], rowid_of[penguin]
        conn.execute("DELETE FROM chunks_fts WHERE rowid IN (?, ?)", (a, b))
        for rowid, old in ((a, b), (b, a)):
            conn.execute(f"INSERT INTO chunks_fts(rowid, {cols}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (rowid, *rows[old]))
        assert exact() == want  # the same rows, other rowids
        assert keyword_relevance(conn, terms, [walrus]) == {walrus: want[walrus]}
        assert keyword_relevance(conn, terms, [penguin]) == {}
        assert keyword_relevance(conn, terms, list(rowid_of)) == want
        conn.close()
    finally:
        store.close()


def test_the_chunks_waiting_for_a_vector_are_found_without_reading_the_whole_table(
        settings) -> None:
    # Every fill (after each saved file) counts and reads the chunks waiting for a vector; a
    # scan of `chunks` reads every text and JSON vector (1.5 s per query at 100k chunks).
    from test_contract_writer import MODEL

    from openmemd.store.sqlite import queries

    store = open_store(settings, "main")
    try:
        for i in range(20):
            add_file(store.writer(), f"memory/embedded-{i}.md", chunks=10, vectors=True)
        add_file(store.writer(), "memory/pending.md", chunks=2)
        conn, _ = db.connect(settings.index_path("main"))
        conn.execute("ANALYZE")  # statistics as `PRAGMA optimize` leaves them
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        assert queries.count_pending_vectors(conn, MODEL) == 2
        assert {r[0] for r in queries.pending_vectors(conn, MODEL, 10)} == {
            "memory/pending.md#0", "memory/pending.md#1"}
        conn.set_trace_callback(None)
        assert statements
        for sql in statements:
            plan = [r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
            assert not any(step.startswith("SCAN chunks") for step in plan), (sql, plan)
        conn.close()
    finally:
        store.close()


def test_the_keyword_legs_filters_keep_the_best_matches_that_pass_them(
        settings, monkeypatch) -> None:
    # The filters (sources, model, derived files) are applied to the best matches after the
    # MATCH, widening while too few pass: the answer is the filtered ranking's, and the MATCH
    # itself never reads every matching row's stored columns.
    from test_contract_writer import MODEL, chunk

    from openmemd.store.base import CandidateFilter
    from openmemd.store.sqlite import fts
    from openmemd.text.tokens import query_terms

    def put(path: str, texts: list[str], source: str = "memory") -> None:
        w = store.writer()
        with w.transaction():
            w.replace_chunks(path, [dataclasses.replace(chunk(path, i, text=t), source=source)
                                    for i, t in enumerate(texts)])
            w.upsert_file(path, source, f"hash-{path}", 1000, 10, 5, 42)

    store = open_store(settings, "main")
    try:
        # derived reports that outrank every note (the word three times), more than one page
        for day in range(12):
            put(f"memory/dreaming/light/2026-01-{day + 1:02d}.md", ["walrus walrus walrus"] * 4)
        put("memory/notes.md", ["walrus and penguin", "a walrus", "walrus walrus",
                                "a walrus", "penguins only"])  # two identical: a tie
        put("sessions/s1.jsonl", ["walrus walrus talk", "walrus"], source="sessions")
        conn, _ = db.connect(settings.index_path("main"))
        terms = query_terms("walrus")

        def expected(where: CandidateFilter, limit: int) -> list[str]:
            # the best by rank, ties in the MATCH's order (rowid); then listed ties by id
            rows = conn.execute(
                "SELECT c.id, c.path, c.source, c.model, bm25(chunks_fts), chunks_fts.rowid "
                "FROM chunks_fts JOIN chunks AS c ON c.id = chunks_fts.id "
                "WHERE chunks_fts MATCH ?", [fts.build_match(terms)]).fetchall()
            kept = [r for r in rows if (not where.sources or r[2] in where.sources)
                    and (where.model is None or r[3] == where.model)
                    and not (where.skip_derived and r[1].startswith("memory/dreaming/"))]
            best = sorted(kept, key=lambda r: (r[4], r[5]))[:limit]
            return [r[0] for r in sorted(best, key=lambda r: (r[4], r[0]))]

        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        for where in (CandidateFilter(skip_derived=True),
                      CandidateFilter(sources=("memory",), skip_derived=True),
                      CandidateFilter(sources=("sessions",)),
                      CandidateFilter(model=MODEL, skip_derived=True),
                      CandidateFilter()):
            for limit in (1, 2, 3, 4, 6, 40, 100):
                got = [c.id for c in fts.keyword_candidates(conn, terms, limit=limit,
                                                            where=where)]
                assert got == expected(where, limit), (where, limit)
        conn.set_trace_callback(None)
        matches = [s for s in statements if "MATCH" in s and not s.startswith("--")]
        assert matches and not any("substr(path" in s for s in matches)
        # A filter that leaves too few of many best matches: inside the MATCH after all.
        monkeypatch.setattr(fts, "FILTER_WIDEN_MAX", 4)
        where = CandidateFilter(skip_derived=True)
        assert [c.id for c in fts.keyword_candidates(conn, terms, limit=1, where=where)
                ] == expected(where, 1)
        conn.close()
    finally:
        store.close()


def test_a_new_index_takes_its_name_only_with_its_whole_schema(settings, monkeypatch) -> None:
    """A status or search during a fresh daemon's start opened the file while its tables were
    being created, found `chunks` without `embedding_cache` and reported the index damaged."""
    from openmemd.store.sqlite import schema

    path = settings.index_path("main")
    seen: list[str] = []
    create = schema.ensure_schema

    def watched(conn: db.Connection) -> None:
        if path.exists():  # what a reader opening the index now would read
            reader, _ = db.connect(path, readonly=True)
            try:
                for table in ("meta", "files", "chunks", "embedding_cache", "chunks_fts"):
                    reader.execute(f"SELECT count(*) FROM {table}").fetchone()
                seen.append("whole")
            except db.DatabaseError as exc:
                seen.append(str(exc))
            finally:
                reader.close()
        create(conn)

    monkeypatch.setattr(schema, "ensure_schema", watched)
    store = open_store(settings, "main")
    try:
        add_file(store.writer(), "memory/a.md", vectors=True)
        assert all(s == "whole" for s in seen), seen
        assert store.reader().stored_files().keys() == {"memory/a.md"}
    finally:
        store.close()
