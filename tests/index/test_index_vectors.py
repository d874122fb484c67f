"""The index with real vectors: the default model, cache reuse, safe rebuilds, fallbacks."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from openmemd.api import MemoryIndex
from openmemd.embed.base import EmbeddingError
from openmemd.store.sqlite import db

NOTES = {
    "MEMORY.md": "# Memory\nThe user's cat is called Miso and hates the vacuum cleaner.\n",
    "memory/2026-11-20.md": "We decided to move the database from MySQL to PostgreSQL next "
                            "quarter.\n",
    "memory/2026-11-21.md": "Alice recommended the novel The Left Hand of Darkness.\n",
    "memory/2026-11-22.md": "我们计划明年春天去日本京都看樱花。\n",
}


@pytest.fixture
def notes(workspace):
    for rel, text in NOTES.items():
        (workspace / rel).write_text(text, encoding="utf-8")
    return workspace


def local(model=""):
    return f'[embedding]\nprovider = "local"\nmodel = "{model}"\n'


def chunk_models(index):
    conn, _ = db.connect(index.db_path)
    try:
        return {r[0] for r in conn.execute("SELECT DISTINCT model FROM chunks")}
    finally:
        conn.close()


def test_default_model_indexes_and_finds_by_meaning(make_settings, notes):
    with MemoryIndex.open(notes, config=make_settings(local())) as index:
        report = index.sync()
        assert report.vectors_embedded == report.chunks == 4
        status = index.status()
        assert status.pending_vectors == 0
        assert status.vector.mode == "sqlite-vec" and status.vector.vectors == 4
        assert status.provider.model == "e5-small-multilingual"
        assert index.search("which pet does the user have")[0].path == "MEMORY.md"
        assert index.search("what migration did we plan for our data store")[0].path == \
            "memory/2026-11-20.md"
        assert index.search("去看花的旅行计划")[0].path == "memory/2026-11-22.md"


def test_model_change_rebuilds_safely_and_reuses_the_cache(make_settings, notes, tmp_path):
    with MemoryIndex.open(notes, config=make_settings(local())) as index:
        first = index.sync()
    assert first.vectors_embedded == 4
    with MemoryIndex.open(notes, config=make_settings(local("minilm-l6-int8"))) as index:
        assert "model" in index.needs_reindex()
        switched = index.sync()
        assert switched.reindexed and switched.vectors_embedded == 4
        assert switched.vectors_from_cache == 0
        assert chunk_models(index) == {"minilm-l6-int8"}
        assert index.search("which pet does the user have")[0].path == "MEMORY.md"
    with MemoryIndex.open(notes, config=make_settings(local())) as index:
        back = index.sync()
        assert back.reindexed and back.vectors_embedded == 0 and back.vectors_from_cache == 4
        assert chunk_models(index) == {"e5-small-multilingual"}
        state = index.db_path.parent
    assert not [p for p in state.iterdir() if ".tmp-" in p.name or ".backup-" in p.name]


class AlwaysFailing(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.dumps({"error": {"message": "model overloaded"}}).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_failing_provider_is_a_clear_error_and_the_old_index_keeps_serving(
        make_settings, notes):
    with MemoryIndex.open(notes, config=make_settings(local())) as index:
        index.sync()
    server = ThreadingHTTPServer(("127.0.0.1", 0), AlwaysFailing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/v1"
    try:
        failing = make_settings(f'[embedding]\nprovider = "openai"\nbase_url = "{url}"\n'
                                'model = "nomic-embed-text"\nmax_retries = 1\n')
        with MemoryIndex.open(notes, config=failing) as index:
            with pytest.raises(EmbeddingError) as info:
                index.sync()
            message = str(info.value)
            assert url in message and "500" in message and "model overloaded" in message
            state = index.db_path.parent
    finally:
        server.shutdown()
    assert not [p for p in state.iterdir() if ".tmp-" in p.name]
    with MemoryIndex.open(notes, config=make_settings(local())) as index:
        assert index.needs_reindex() == []
        assert index.search("which pet does the user have")[0].path == "MEMORY.md"


def test_interrupted_embedding_loses_nothing(make_settings, notes):
    settings = make_settings(local() + "batch_size = 1\n")
    with MemoryIndex.open(notes, config=settings) as index:
        keyword_first = index.sync(fill_vectors=False)
        assert keyword_first.vectors_pending == 4
        assert index.search("PostgreSQL")[0].path == "memory/2026-11-20.md"  # keywords at once
        calls = []
        partial = index.fill_vectors(should_stop=lambda: calls.append(1) or len(calls) > 2)
        assert 0 < partial.vectors_embedded < 4
    with MemoryIndex.open(notes, config=settings) as index:
        rest = index.sync()
        assert rest.vectors_embedded == 4 - partial.vectors_embedded
        assert index.status().pending_vectors == 0


def test_without_sqlite_vec_vectors_are_searched_in_process(make_settings, notes,
                                                             monkeypatch):
    monkeypatch.setenv(db.DRIVER_ENV, "sqlite3")  # this Python's sqlite3 cannot load extensions
    with MemoryIndex.open(notes, config=make_settings(local())) as index:
        report = index.sync()
        assert report.vectors_embedded == 4
        vector = index.status().vector
        assert vector.mode == "in-process"
        assert vector.reason.startswith("sqlite-vec unavailable: ")
        assert index.search("which pet does the user have")[0].path == "MEMORY.md"
        assert index.search("去看花的旅行计划")[0].path == "memory/2026-11-22.md"


def test_a_two_note_memory_answers_a_natural_question(make_settings, workspace):
    """BM25's IDF vanishes in a tiny corpus; the first notes a user writes must still be found."""
    (workspace / "MEMORY.md").write_text("# Memory\n\nI prefer dark roast coffee.\n"
                                         "My dog is named Biscuit.\n")
    (workspace / "memory" / "2026-11-28.md").write_text(
        "Met Alice at the climbing gym on Tuesday.\n")
    with MemoryIndex.open(workspace, config=make_settings(local())) as index:
        index.sync()
        hits = index.search("who did I meet at the gym")  # default min_score 0.35
        assert hits and hits[0].path == "memory/2026-11-28.md"
        assert index.search("what is my dog called")[0].path == "MEMORY.md"
