"""The reading half of the store contract (`store.base.StoreReader`), run against every backend
in conftest.BACKENDS. The index is filled through `store.writer()` only; what the reader returns
is checked against what was written (cosines against numpy, keyword hits against the text)."""

from __future__ import annotations

import numpy as np
import pytest

from openmemd.store.base import (
    CacheEntry,
    CacheKey,
    CandidateFilter,
    ChunkRow,
    IndexStore,
    StoredChunk,
    StoredFile,
    StoredFileRecord,
    StoreReader,
)
from openmemd.text.tokens import covered_terms, fts_index_text, query_terms

DIMS = 8
KEY = CacheKey("test-provider", "m1", "key-1")
T0 = 1_700_000_000_000  # ms

# (path, source, model, texts): filler notes keep every query term rare enough for BM25.
FILES = [
    ("MEMORY.md", "memory", "m1", [
        "The user prefers dark roast coffee with oat milk.",
        "Kubernetes rollback runbook for the billing service.",
    ]),
    ("memory/2024-05-01.md", "memory", "m1", [
        "Kubernetes cluster notes: kubernetes kubernetes nodes.",
        "Planning a hiking trip to the Swiss Alps with my sister.",
        "我们在北京的故宫博物院参观了一整天。",
    ]),
    ("memory/2024-05-02.md", "memory", "m2", [
        "Rollback of the database migration went fine.",
        "The dentist appointment moved to Tuesday.",
    ]),
    ("memory/dreaming/rem/2024-05-03.md", "memory", "m1", [
        "Possible lasting truth: kubernetes rollback runbook.",
    ]),
    ("sessions/a.jsonl", "sessions", "m1", [
        "User asked about the kubernetes runbook and a Python venv.",
        "Grocery list: eggs, spinach, rice noodles and green tea.",
    ]),
    ("memory/2024-05-04.md", "memory", "m1", [
        "Quarterly budget review with the finance team.",
        "The garden needs watering twice a week in summer.",
        "Birthday gift ideas: a novel, a scarf, concert tickets.",
        "The car is due for its annual inspection in March.",
    ]),
]
PENDING = {"memory/2024-05-04.md#3"}  # a chunk still waiting for its vector


def cid(path: str, n: int) -> str:
    return f"{path}#{n}"


def vector_of(chunk_id: str) -> np.ndarray:
    seed = sum(ord(ch) * (i + 1) for i, ch in enumerate(chunk_id))
    return np.random.default_rng(seed).standard_normal(DIMS).astype(np.float32)


def rows_of(path: str, source: str, model: str, texts: list[str]) -> list[ChunkRow]:
    return [ChunkRow(id=cid(path, n), path=path, source=source, start_line=n * 10 + 1,
                     end_line=n * 10 + 5, hash=f"h-{path}-{n}", model=model, text=text,
                     fts_text=fts_index_text(text),
                     vector=None if cid(path, n) in PENDING else vector_of(cid(path, n)),
                     updated_at=T0 + n)
            for n, text in enumerate(texts)]


ALL_ROWS = {r.id: r for f in FILES for r in rows_of(*f)}
META = {"model": "m1", "vectorDims": DIMS, "chunkTokens": 400}
CACHED = [(f"hash-{i}", vector_of(f"cache-{i}")) for i in range(3)]


def mtime_of(i: int) -> int:
    return T0 + i * 86_400_000


@pytest.fixture
def filled(store: IndexStore) -> StoreReader:
    w = store.writer()
    with w.transaction():
        for i, (path, source, model, texts) in enumerate(FILES):
            w.upsert_file(path, source, f"hash-{path}", mtime_of(i), 100 + i, 1000 + i, 7 + i)
            w.replace_chunks(path, rows_of(path, source, model, texts))
        w.cache_store(KEY, CACHED, T0)
        w.write_meta(META)
    return store.reader()


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def exact_nearest(q: np.ndarray, model: str, *, sources=None, skip_derived=False):
    """(id, cosine) of every stored vector of `model` passing the filters, best first."""
    out = []
    for r in ALL_ROWS.values():
        if r.vector is None or r.model != model:
            continue
        if sources and r.source not in sources:
            continue
        if skip_derived and r.path.startswith("memory/dreaming/"):
            continue
        out.append((r.id, float(unit(r.vector) @ q)))
    return sorted(out, key=lambda t: (-t[1], t[0]))


# -- keyword leg ------------------------------------------------------------------------------

def test_keyword_candidates_best_first_with_positive_relevance(filled: StoreReader) -> None:
    terms = query_terms("kubernetes rollback runbook")
    found = filled.keyword_candidates(terms, limit=20, where=CandidateFilter())
    ids = [c.id for c in found]
    assert len(ids) == len(set(ids)) >= 4
    # Every chunk holding a query term is found, and nothing else.
    holding = {r.id for r in ALL_ROWS.values() if covered_terms(terms, r.text)}
    assert set(ids) == holding
    assert all(c.measure > 0 for c in found)
    assert [(-c.measure, c.id) for c in found] == sorted((-c.measure, c.id) for c in found)
    # The chunk with all three terms (and not derived) beats those with one.
    best = cid("MEMORY.md", 1)
    assert found[0].id in (best, cid("memory/dreaming/rem/2024-05-03.md", 0))
    one_term = [c for c in found if len(covered_terms(terms, c.text)) == 1]
    assert one_term and all(c.measure < found[0].measure for c in one_term)
    # Rows come back whole: text, lines, source as written.
    for c in found:
        row = ALL_ROWS[c.id]
        assert (c.path, c.source, c.start_line, c.end_line, c.text) == (
            row.path, row.source, row.start_line, row.end_line, row.text)
    # The limit keeps the best ones.
    assert [c.id for c in filled.keyword_candidates(terms, limit=2,
                                                    where=CandidateFilter())] == ids[:2]


def test_keyword_candidates_filters(filled: StoreReader) -> None:
    terms = query_terms("kubernetes rollback runbook")

    def ids(where: CandidateFilter) -> set[str]:
        return {c.id for c in filled.keyword_candidates(terms, limit=50, where=where)}

    everything = ids(CandidateFilter())
    sessions = ids(CandidateFilter(sources=("sessions",)))
    assert sessions == {cid("sessions/a.jsonl", 0)}
    assert ids(CandidateFilter(sources=("memory", "sessions"))) == everything
    no_derived = ids(CandidateFilter(skip_derived=True))
    assert cid("memory/dreaming/rem/2024-05-03.md", 0) in everything
    assert no_derived == {i for i in everything if "/dreaming/" not in i}
    assert ids(CandidateFilter(model="m2")) == {cid("memory/2024-05-02.md", 0)}
    assert ids(CandidateFilter(sources=("memory",), model="m1", skip_derived=True)) == {
        cid("MEMORY.md", 1), cid("memory/2024-05-01.md", 0)}


def test_keyword_candidates_cjk_and_nothing_searchable(filled: StoreReader) -> None:
    found = filled.keyword_candidates(query_terms("故宫"), limit=5, where=CandidateFilter())
    assert [c.id for c in found] == [cid("memory/2024-05-01.md", 2)]
    for query in ("?!  ...", "", '"', "zzqx"):
        assert filled.keyword_candidates(query_terms(query), limit=5,
                                         where=CandidateFilter()) == []
    assert filled.keyword_candidates(query_terms("kubernetes"), limit=0,
                                     where=CandidateFilter()) == []


def test_keyword_relevance_for_given_ids(filled: StoreReader) -> None:
    terms = query_terms("kubernetes rollback runbook")
    found = {c.id: c.measure for c in filled.keyword_candidates(terms, limit=50,
                                                                where=CandidateFilter())}
    no_term = cid("MEMORY.md", 0)  # coffee
    asked = [*found, no_term, "no-such-chunk"]
    relevance = filled.keyword_relevance(terms, asked)
    assert relevance.keys() == found.keys()
    for chunk_id, measure in found.items():
        assert relevance[chunk_id] == pytest.approx(measure, rel=1e-9)
    assert filled.keyword_relevance(terms, []) == {}
    assert filled.keyword_relevance(query_terms("?!"), list(found)) == {}


# -- vector leg -------------------------------------------------------------------------------

@pytest.mark.parametrize("where", [
    CandidateFilter(model="m1"),
    CandidateFilter(model="m2"),
    CandidateFilter(model="m1", sources=("sessions",)),
    CandidateFilter(model="m1", skip_derived=True),
    CandidateFilter(model="m1", sources=("memory",), skip_derived=True),
], ids=repr)
def test_vector_candidates_are_the_exact_cosine_order(filled: StoreReader,
                                                      where: CandidateFilter) -> None:
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = unit(rng.standard_normal(DIMS).astype(np.float32))
        expected = exact_nearest(q, where.model or "", sources=where.sources,
                                 skip_derived=where.skip_derived)
        assert expected
        for limit in (1, 3, 50):
            found = filled.vector_candidates(q, limit=limit, where=where)
            assert [c.id for c in found] == [e[0] for e in expected[:limit]]
            np.testing.assert_allclose([c.measure for c in found],
                                       [e[1] for e in expected[:limit]], atol=1e-5)
    for c in filled.vector_candidates(q, limit=50, where=where):
        row = ALL_ROWS[c.id]
        assert (c.path, c.source, c.start_line, c.end_line, c.text) == (
            row.path, row.source, row.start_line, row.end_line, row.text)


def test_vector_candidates_find_a_stored_vector_first(filled: StoreReader) -> None:
    target = cid("sessions/a.jsonl", 1)
    q = unit(ALL_ROWS[target].vector)
    found = filled.vector_candidates(q, limit=3, where=CandidateFilter(model="m1"))
    assert found[0].id == target and found[0].measure == pytest.approx(1.0, abs=1e-5)
    # Pending chunks have no vector; other models and sizes are not compared.
    assert PENDING.isdisjoint(c.id for c in filled.vector_candidates(
        q, limit=50, where=CandidateFilter(model="m1")))
    assert filled.vector_candidates(q, limit=3, where=CandidateFilter(model="nope")) == []
    assert filled.vector_candidates(unit(np.ones(DIMS + 4, np.float32)), limit=3,
                                    where=CandidateFilter(model="m1")) == []
    assert filled.vector_candidates(q, limit=0, where=CandidateFilter(model="m1")) == []


def test_cosines_by_id(filled: StoreReader) -> None:
    q = unit(np.random.default_rng(2).standard_normal(DIMS).astype(np.float32))
    m1 = [r.id for r in ALL_ROWS.values() if r.model == "m1"]
    found = filled.cosines(q, [*m1, cid("memory/2024-05-02.md", 0), "no-such-chunk"],
                           model="m1")
    assert found.keys() == {i for i in m1 if i not in PENDING}
    for chunk_id, cosine in found.items():
        assert cosine == pytest.approx(float(unit(ALL_ROWS[chunk_id].vector) @ q), abs=1e-5)
    assert filled.cosines(q, m1, model="m2") == {}
    assert filled.cosines(q, [], model="m1") == {}


# -- chunks by path ---------------------------------------------------------------------------

def test_chunks_by_path_newest_first_with_filters(filled: StoreReader) -> None:
    def ids(patterns: list[str], limit: int = 50, where: CandidateFilter | None = None
            ) -> list[str]:
        return [c.id for c in filled.chunks_by_path(patterns, limit=limit,
                                                    where=where or CandidateFilter())]

    may = ["*memory/*2024-05-0*.md"]
    # Path descending (byte order: "memory/dreaming/…" after "memory/2024-…"), then line.
    expected = [cid("memory/dreaming/rem/2024-05-03.md", 0),
                *(cid("memory/2024-05-04.md", n) for n in range(4)),
                *(cid("memory/2024-05-02.md", n) for n in range(2)),
                *(cid("memory/2024-05-01.md", n) for n in range(3))]
    assert ids(may) == expected
    assert ids(may, limit=3) == expected[:3]
    assert ids(may, where=CandidateFilter(skip_derived=True)) == expected[1:]
    assert ids(may, where=CandidateFilter(model="m2")) == [cid("memory/2024-05-02.md", n)
                                                           for n in range(2)]
    assert ids(may, where=CandidateFilter(sources=("sessions",))) == []
    # Several patterns, one file each; `*` spans folders; no pattern, no match, no limit: none.
    assert ids(["memory/2024-05-01.md", "*a.jsonl"]) == [
        cid("sessions/a.jsonl", 0), cid("sessions/a.jsonl", 1),
        *(cid("memory/2024-05-01.md", n) for n in range(3))]
    assert ids(["*2024-05-03*"]) == [cid("memory/dreaming/rem/2024-05-03.md", 0)]
    assert ids(["memory/2024-05-0"]) == ids(["nothing/*"]) == ids([]) == ids(may, limit=0) == []
    # Rows come back whole, with no measure.
    for c in filled.chunks_by_path(may, limit=50, where=CandidateFilter()):
        row = ALL_ROWS[c.id]
        assert (c.path, c.source, c.start_line, c.end_line, c.text, c.measure) == (
            row.path, row.source, row.start_line, row.end_line, row.text, 0.0)


def test_chunks_by_path_wildcards_of_the_engine_are_plain_characters(store: IndexStore) -> None:
    odd = "notes/100%_done[1]?.md"
    w = store.writer()
    with w.transaction():
        for i, path in enumerate((odd, "notes/100xxdone1x.md", "notes/100%_done1?.md")):
            w.upsert_file(path, "memory", f"h{i}", mtime_of(i), 1, 1, i)
            w.replace_chunks(path, rows_of(path, "memory", "m1", [f"note {i}"]))
    found = store.reader().chunks_by_path([odd], limit=10, where=CandidateFilter())
    assert [c.path for c in found] == [odd]
    found = store.reader().chunks_by_path(["notes/100%*"], limit=10, where=CandidateFilter())
    assert [c.path for c in found] == ["notes/100%_done[1]?.md", "notes/100%_done1?.md"]


# -- files, meta, stats -----------------------------------------------------------------------

def test_file_mtimes_and_stored_files(filled: StoreReader) -> None:
    paths = [f[0] for f in FILES]
    assert filled.file_mtimes([*paths, "memory/unknown.md"]) == {
        path: mtime_of(i) for i, path in enumerate(paths)}
    assert filled.file_mtimes([]) == {}
    assert filled.stored_files() == {
        path: StoredFile(path, source, mtime_of(i), 100 + i)
        for i, (path, source, _m, _t) in enumerate(FILES)}


def test_file_chunks_of_the_own_namespace_in_line_order(store: IndexStore,
                                                        filled: StoreReader) -> None:
    path, source, _m, texts = FILES[1]
    assert filled.file_chunks(path, "") == [
        StoredChunk(source, n * 10 + 1, n * 10 + 5, text) for n, text in enumerate(texts)]
    assert filled.file_chunks(path, store.namespace) == filled.file_chunks(path, "")
    assert filled.file_chunks("memory/unknown.md", "") == []
    assert filled.file_chunks(path, "not-searched") == []  # never another's unasked


def test_read_meta(store: IndexStore, filled: StoreReader) -> None:
    assert filled.read_meta() == META
    w = store.writer()
    with w.transaction():
        w.write_meta({**META, "model": "m2"})
    assert store.reader().read_meta() == {**META, "model": "m2"}


def test_stats(filled: StoreReader) -> None:
    stats = filled.stats("m1")
    assert (stats.files, stats.chunks, stats.cache_entries) == (
        len(FILES), len(ALL_ROWS), len(CACHED))
    assert stats.vectors in (-1, len(ALL_ROWS) - len(PENDING))
    assert stats.pending_vectors == len(PENDING)
    assert filled.count_pending_vectors("m1") == len(PENDING)  # without the other counts
    assert filled.stats("m2").pending_vectors == 0 == filled.count_pending_vectors("m2")
    assert filled.stats(None).pending_vectors == 0
    expected: dict[str, dict[str, int]] = {}
    for _path, source, _model, texts in FILES:
        entry = expected.setdefault(source, {"files": 0, "chunks": 0})
        entry["files"] += 1
        entry["chunks"] += len(texts)
    assert {s: dict(v) for s, v in stats.by_source.items()} == expected


# -- export -----------------------------------------------------------------------------------

def exported(reader: StoreReader) -> tuple[list, list, list]:
    return list(reader.export_files()), list(reader.export_chunks()), list(reader.export_cache())


def same_chunks(a: list[ChunkRow], b: list[ChunkRow]) -> None:
    assert [(r.id, r.path, r.source, r.start_line, r.end_line, r.hash, r.model, r.text,
             r.fts_text, r.updated_at) for r in a] == [
            (r.id, r.path, r.source, r.start_line, r.end_line, r.hash, r.model, r.text,
             r.fts_text, r.updated_at) for r in b]
    for x, y in zip(a, b, strict=True):
        assert (x.vector is None) == (y.vector is None), x.id
        if x.vector is not None:
            np.testing.assert_array_equal(x.vector, y.vector)


def test_export_is_what_was_written(filled: StoreReader) -> None:
    files, chunks, cache = exported(filled)
    assert sorted(files, key=lambda f: f.path) == sorted(
        (StoredFileRecord(path, source, f"hash-{path}", mtime_of(i), 100 + i, 1000 + i, 7 + i)
         for i, (path, source, _m, _t) in enumerate(FILES)), key=lambda f: f.path)
    assert sorted(r.id for r in chunks) == sorted(ALL_ROWS)
    same_chunks(sorted(chunks, key=lambda r: r.id), sorted(ALL_ROWS.values(), key=lambda r: r.id))
    assert all(r.vector is None or r.vector.dtype == np.float32 for r in chunks)
    assert sorted((e.key, e.hash) for e in cache) == sorted((KEY, h) for h, _v in CACHED)
    by_hash = {e.hash: e for e in cache}
    for h, v in CACHED:
        np.testing.assert_array_equal(by_hash[h].vector, v)
        assert by_hash[h].updated_at == T0
    # A stable order: the same export twice is the same sequence.
    again = exported(filled)
    assert [f.path for f in again[0]] == [f.path for f in files]
    assert [r.id for r in again[1]] == [r.id for r in chunks]
    assert [(e.key, e.hash) for e in again[2]] == [(e.key, e.hash) for e in cache]


def test_export_round_trip(store: IndexStore, filled: StoreReader) -> None:
    """Export, empty the index, write the export back: the same export again."""
    files, chunks, cache = exported(filled)
    w = store.writer()
    with w.transaction():
        for f in files:
            w.delete_file(f.path)
        w.cache_prune(1)
    after = store.reader()
    assert after.stats("m1").files == 0 and after.stats("m1").chunks == 0
    with w.transaction():
        for f in files:
            w.upsert_file(f.path, f.source, f.hash, f.mtime, f.size, f.ctime_ns, f.ino)
            w.replace_chunks(f.path, [r for r in chunks if r.path == f.path])
        by_key: dict[CacheKey, list[CacheEntry]] = {}
        for e in cache:
            by_key.setdefault(e.key, []).append(e)
        for key, entries in by_key.items():
            for e in entries:  # each keeps its own updated_at
                w.cache_store(key, [(e.hash, e.vector)], e.updated_at)
    files2, chunks2, cache2 = exported(store.reader())
    assert files2 == files
    same_chunks(chunks2, chunks)
    assert [(e.key, e.hash, e.updated_at) for e in cache2] == [
        (e.key, e.hash, e.updated_at) for e in cache]
    for x, y in zip(cache2, cache, strict=True):
        np.testing.assert_array_equal(x.vector, y.vector)
