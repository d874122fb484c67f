"""The vector leg from a resident matrix: same answers as sqlite-vec's KNN, kept current by the
index's change log (no whole reload after an edit), another process's writes seen, concurrent
searches during writes never failing."""

import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from openmemd.api import MemoryIndex
from openmemd.search import vector
from openmemd.store.sqlite import db, queries, resident, schema, vec_log
from openmemd.store.sqlite.queries import SqliteChunkRow
from openmemd.store.sqlite.reader import SqliteReader

DIMS = 8


def _db_file(conn) -> str:
    return next(f for _seq, name, f in conn.execute("PRAGMA database_list") if name == "main")


def vector_search(conn, q, *, vec, **kw):
    """The vector leg as the pipeline runs it: the query normalised once, then the store."""
    return vector.vector_search(SqliteReader(conn, vec, _db_file(conn)),
                                vector.normalise_query(q), **kw)


def similarities_for(conn, q, ids, *, model, vec):
    return SqliteReader(conn, vec, _db_file(conn)).cosines(vector.normalise_query(q), ids,
                                                           model=model)


@pytest.fixture
def resident_on():
    resident.forget()
    resident.enable()
    yield
    resident.enable(False)
    resident.forget()


def _row(i: int, model: str, source: str, path: str, vector: np.ndarray | None) -> SqliteChunkRow:
    return SqliteChunkRow(id=f"c{i:05d}", path=path, source=source, start_line=1, end_line=2,
                          hash=f"h{i}", model=model, text=f"chunk {i}", fts_text=f"chunk {i}",
                          embedding=("[" + ",".join(f"{x:.9g}" for x in vector) + "]")
                          if vector is not None else "[]", updated_at=0)


def write_chunks(conn, rows: list[SqliteChunkRow]) -> None:
    """As the indexer writes them: chunk rows, then each vector into chunks_vec."""
    with db.write_transaction(conn):
        queries.insert_chunks(conn, rows)
        for r in rows:
            if r.embedding != "[]":
                v = np.asarray([float(x) for x in r.embedding[1:-1].split(",")], np.float32)
                conn.execute("INSERT INTO chunks_vec(id, embedding) VALUES (?, ?)",
                             (r.id, v.tobytes()))


def random_rows(rng, start: int, count: int) -> list[SqliteChunkRow]:
    rows = []
    for i in range(start, start + count):
        model = "m1" if i % 5 else "m2"
        source = "sessions" if i % 3 == 0 else "memory"
        path = f"memory/dreaming/rem/{i}.md" if i % 7 == 0 else f"memory/{i % 40}.md"
        rows.append(_row(i, model, source, path, rng.standard_normal(DIMS).astype(np.float32)))
    return rows


@pytest.fixture
def index_db(tmp_path):
    path = tmp_path / "index.sqlite"
    conn, vec = db.connect(path)
    assert vec.available, vec.reason
    schema.ensure_schema(conn)
    schema.ensure_vec_table(conn, DIMS)
    yield path, conn
    conn.close()


def both_legs(conn, vec, q, **kw):
    resident.enable(False)
    knn = vector_search(conn, q, vec=vec, **kw)
    resident.enable()
    mine = vector_search(conn, q, vec=vec, **kw)
    return knn, mine


def same(knn, mine):
    assert [h.id for h in mine] == [h.id for h in knn]
    assert [h.path for h in mine] == [h.path for h in knn]
    np.testing.assert_allclose([h.score for h in mine], [h.score for h in knn], atol=1e-5)


def test_resident_matrix_gives_the_sqlite_vec_knn_results_with_source_model_filters(
        index_db, resident_on):
    path, writer = index_db
    rng = np.random.default_rng(3)
    write_chunks(writer, random_rows(rng, 0, 400))
    conn, vec = db.connect(path, readonly=True)
    try:
        for _ in range(10):
            q = rng.standard_normal(DIMS).astype(np.float32)
            for kw in ({"model": "m1", "limit": 10},
                       {"model": "m2", "limit": 25},
                       {"model": "m1", "limit": 10, "sources": ["sessions"]},
                       {"model": "m1", "limit": 12, "skip_derived": True},
                       {"model": "m2", "limit": 5, "sources": ["memory"], "skip_derived": True},
                       {"model": "nope", "limit": 5}):
                knn, mine = both_legs(conn, vec, q, **kw)
                same(knn, mine)
                assert mine or kw["model"] == "nope"
        # The fused candidates' missing vector scores: point lookups in vec0, or the matrix.
        ids = [f"c{i:05d}" for i in range(0, 400, 7)] + ["missing"]
        resident.enable(False)
        by_vec0 = similarities_for(conn, q, ids, model="m1", vec=vec)
        resident.enable()
        by_matrix = similarities_for(conn, q, ids, model="m1", vec=vec)
        assert by_matrix.keys() == by_vec0.keys() and len(by_vec0) > 20
        for cid, cosine in by_vec0.items():
            assert by_matrix[cid] == pytest.approx(cosine, abs=1e-5)
        # Without sqlite-vec the same matrix is filled from the JSON copy: same answers.
        q = rng.standard_normal(DIMS).astype(np.float32)
        knn = vector_search(conn, q, vec=vec, model="m1", limit=10, sources=["memory"])
        json_leg = vector_search(conn, q, vec=db.VectorSupport(False), model="m1", limit=10,
                                 sources=["memory"])
        same(knn, json_leg)
    finally:
        conn.close()
    m = resident.matrix_for(str(path), True)
    assert m.full_loads == 1


def test_edit_through_the_writer_is_searchable_without_a_whole_reload(index_db, resident_on):
    path, writer = index_db
    rng = np.random.default_rng(5)
    write_chunks(writer, random_rows(rng, 0, 200))
    conn, vec = db.connect(path, readonly=True)
    try:
        q = rng.standard_normal(DIMS).astype(np.float32)
        vector_search(conn, q, vec=vec, model="m1", limit=5)
        m = resident.matrix_for(str(path), True)
        assert m.full_loads == 1

        # write: a chunk equal to the query is the best hit at once
        write_chunks(writer, [_row(900, "m1", "memory", "memory/new.md", q)])
        hits = vector_search(conn, q, vec=vec, model="m1", limit=5)
        assert hits[0].id == "c00900" and hits[0].score == pytest.approx(1.0, abs=1e-5)

        # re-embed (the fill's UPDATE): the old vector is gone, the new one found
        other = -q
        with db.write_transaction(writer):
            queries.set_embedding(writer, "c00900", "[" + ",".join(map(str, other)) + "]",
                                  other.astype(np.float32).tobytes())
        hits = vector_search(conn, q, vec=vec, model="m1", limit=5)
        assert "c00900" not in [h.id for h in hits]
        assert vector_search(conn, other, vec=vec, model="m1", limit=1)[0].id == "c00900"

        # delete the file
        with db.write_transaction(writer):
            queries.delete_file(writer, "memory/new.md", vec=True)
        assert "c00900" not in [h.id for h in vector_search(conn, other, vec=vec, model="m1",
                                                            limit=50)]
        knn, mine = both_legs(conn, vec, q, model="m1", limit=20)
        same(knn, mine)
        assert m.full_loads == 1 and m.deltas == 3
    finally:
        conn.close()


WRITER_SCRIPT = """
import sys
import numpy as np
from openmemd.store.sqlite import db, queries
from openmemd.store.sqlite.queries import SqliteChunkRow
conn, _ = db.connect(sys.argv[1])
v = np.asarray([float(x) for x in sys.argv[2].split(",")], np.float32)
row = SqliteChunkRow(id="from-cli", path="memory/cli.md", source="memory", start_line=1, end_line=1,
                     hash="x", model="m1", text="t", fts_text="t",
                     embedding="[" + sys.argv[2] + "]", updated_at=0)
with db.write_transaction(conn):
    queries.insert_chunks(conn, [row])
    conn.execute("INSERT INTO chunks_vec(id, embedding) VALUES (?, ?)", ("from-cli", v.tobytes()))
conn.close()
"""


def test_another_process_writing_the_index_is_picked_up(index_db, resident_on):
    path, writer = index_db
    rng = np.random.default_rng(9)
    write_chunks(writer, random_rows(rng, 0, 100))
    conn, vec = db.connect(path, readonly=True)
    try:
        q = rng.standard_normal(DIMS).astype(np.float32)
        assert "from-cli" not in [h.id for h in vector_search(conn, q, vec=vec, model="m1",
                                                              limit=5)]
        subprocess.run([sys.executable, "-c", WRITER_SCRIPT, str(path),
                        ",".join(f"{x:.9g}" for x in q)], check=True, timeout=60)
        assert vector_search(conn, q, vec=vec, model="m1", limit=5)[0].id == "from-cli"
        assert resident.matrix_for(str(path), True).full_loads == 1
    finally:
        conn.close()


def test_a_rebuilt_file_under_the_same_path_is_loaded_afresh(tmp_path, resident_on):
    path = tmp_path / "index.sqlite"
    rng = np.random.default_rng(11)
    for round_ in range(2):
        if path.exists():
            path.unlink()
        conn, _ = db.connect(path)
        schema.ensure_schema(conn)
        schema.ensure_vec_table(conn, DIMS)
        write_chunks(conn, random_rows(rng, round_ * 1000, 50))
        conn.close()
        reader, vec = db.connect(path, readonly=True)
        try:
            q = rng.standard_normal(DIMS).astype(np.float32)
            knn, mine = both_legs(reader, vec, q, model="m1", limit=10)
            same(knn, mine)
            assert all(int(h.id[1:]) >= round_ * 1000 for h in mine)
        finally:
            reader.close()
    assert resident.matrix_for(str(path), True).full_loads == 2


def test_concurrent_searches_during_writes_never_fail(index_db, resident_on):
    path, writer = index_db
    rng = np.random.default_rng(13)
    write_chunks(writer, random_rows(rng, 0, 300))
    errors: list[BaseException] = []
    stop = threading.Event()
    searched = [0]

    def searcher(seed: int) -> None:
        local = np.random.default_rng(seed)
        conn, vec = db.connect(path, readonly=True, check_same_thread=False)
        try:
            while not stop.is_set():
                q = local.standard_normal(DIMS).astype(np.float32)
                hits = vector_search(conn, q, vec=vec, model="m1", limit=10)
                assert len(hits) == 10
                assert len({h.id for h in hits}) == 10
                assert all(-1.0001 <= h.score <= 1.0001 for h in hits)
                searched[0] += 1
        except BaseException as exc:  # reported to the main thread
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=searcher, args=(s,)) for s in range(3)]
    for t in threads:
        t.start()
    try:
        for step in range(30):  # writes, deletes and growth past the headroom
            write_chunks(writer, random_rows(rng, 1000 + step * 60, 60))
            with db.write_transaction(writer):
                queries.delete_file(writer, f"memory/{step}.md", vec=True)
            time.sleep(0.005)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    assert not errors, errors[0]
    assert searched[0] > 0
    conn, vec = db.connect(path, readonly=True)
    try:
        knn, mine = both_legs(conn, vec, rng.standard_normal(DIMS).astype(np.float32),
                              model="m1", limit=30, sources=["memory"])
        same(knn, mine)
    finally:
        conn.close()
    assert resident.matrix_for(str(path), True).full_loads == 1


NOTES = {
    "MEMORY.md": "# Memory\nThe user's cat is called Miso and hates the vacuum cleaner.\n",
    "memory/2026-11-20.md": "We decided to move the database from MySQL to PostgreSQL.\n",
}


def test_memory_index_edit_is_found_by_vector_from_the_resident_matrix(
        make_settings, workspace, resident_on):
    for rel, text in NOTES.items():
        (workspace / rel).write_text(text, encoding="utf-8")
    settings = make_settings('[embedding]\nprovider = "local"\n[query.hybrid]\nenabled = false\n')
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        assert index.search("which pet does the user have")[0].path == "MEMORY.md"
        m = resident.matrix_for(str(index.db_path), True)
        assert m.full_loads == 1
        (workspace / "memory" / "2026-11-23.md").write_text(
            "Our dog Bruno loves chasing tennis balls in the park.\n", encoding="utf-8")
        index.sync()
        assert index.search("what does the dog like to play with")[0].path == \
            "memory/2026-11-23.md"
        (workspace / "memory" / "2026-11-23.md").unlink()
        index.sync()
        assert "memory/2026-11-23.md" not in [
            h.path for h in index.search("what does the dog like to play with")]
        assert m.full_loads == 1 and m.deltas >= 2


def test_an_index_without_the_change_log_is_searched_with_sqlite_vec(index_db, resident_on):
    path, writer = index_db
    rng = np.random.default_rng(17)
    write_chunks(writer, random_rows(rng, 0, 60))
    writer.execute("DROP TABLE openmemd_vec_log")  # as an index written by an older openmemd
    conn, vec = db.connect(path, readonly=True)
    try:
        q = rng.standard_normal(DIMS).astype(np.float32)
        knn, mine = both_legs(conn, vec, q, model="m1", limit=10)
        same(knn, mine)
        assert len(mine) == 10
    finally:
        conn.close()
    assert resident.matrix_for(str(path), True).full_loads == 0


def test_an_index_without_the_change_log_or_sqlite_vec_is_searched_in_process(index_db):
    path, writer = index_db
    rng = np.random.default_rng(19)
    write_chunks(writer, random_rows(rng, 0, 60))
    # As an index no writer of this version opened (OpenClaw's): no change log to follow.
    writer.execute("DELETE FROM meta WHERE key = ?", (vec_log.EPOCH_KEY,))
    conn, vec = db.connect(path, readonly=True)
    try:
        for i in range(3):  # one-shot searches (the resident matrix off), a write after each
            q = rng.standard_normal(DIMS).astype(np.float32)
            knn = vector_search(conn, q, vec=vec, model="m1", limit=10, sources=["memory"])
            numpy = vector_search(conn, q, vec=db.VectorSupport(False), model="m1", limit=10,
                                  sources=["memory"])
            same(knn, numpy)
            assert len(numpy) == 10
            write_chunks(writer, [_row(900 + i, "m1", "memory", "memory/new.md", q)])
            found = vector_search(conn, q, vec=db.VectorSupport(False), model="m1", limit=1)
            assert found[0].id == f"c{900 + i:05d}"
    finally:
        conn.close()
