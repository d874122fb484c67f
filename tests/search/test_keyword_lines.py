"""The keyword leg weighs a chunk by how many of the query's words it holds and how many of them
stand in one of its lines (`search/keyword.py`): words told together are about one thing."""

from __future__ import annotations

import json

from openmemd.search import keyword
from openmemd.store.sqlite import db, schema
from openmemd.store.sqlite.reader import SqliteReader
from openmemd.text import tokens

_MODEL = "test"


def _reader(tmp_path, texts: dict[str, str]) -> SqliteReader:
    conn, vec = db.connect(tmp_path / "kw.sqlite")
    schema.ensure_schema(conn)
    for cid, text in texts.items():
        conn.execute(
            "INSERT INTO chunks(id, path, source, start_line, end_line, hash, model, text, "
            "embedding, updated_at) VALUES (?, ?, 'memory', 1, 3, ?, ?, ?, ?, 0)",
            (cid, f"memory/{cid}.md", cid, _MODEL, text, json.dumps([0.0] * 4)))
        conn.execute(
            "INSERT INTO chunks_fts(text, id, path, source, model, start_line, end_line) "
            "VALUES (?, ?, ?, 'memory', ?, 1, 3)",
            (tokens.fts_index_text(text), cid, f"memory/{cid}.md", _MODEL))
    return SqliteReader(conn, vec, tmp_path / "kw.sqlite")


def test_words_in_one_line_outrank_the_same_words_scattered(tmp_path):
    # the same words, as often, in chunks as long: only where they stand differs (a tie
    # would put "a-scattered" first)
    reader = _reader(tmp_path, {
        "a-scattered": "- Caroline: the agency called.\n- Melanie: oh?\n- Melanie: adoption "
                       "is slow.",
        "b-together": "- Caroline: the adoption agency called.\n- Melanie: oh?\n- Melanie: "
                      "is slow.",
    })
    hits = keyword.keyword_search(reader, tokens.query_terms("Caroline agency, adoption"),
                                  limit=10)
    assert [h.id for h in hits] == ["b-together", "a-scattered"]
    assert hits[0].coverage == hits[1].coverage == 1.0
    assert hits[0].score > hits[1].score

