"""`openmemd store copy`: SQLite -> PostgreSQL -> SQLite, row for row, without re-embedding.

A tiny real index (the real model, four notes and an empty one) is copied to a real PostgreSQL
server (the embedded wheel) and back to a new SQLite file. Both copies must equal the source
row for row with bit-identical float32 vectors, answer the same search with the same hits, and
a second run must change nothing. The CLI must never print the URL's password. Each copy
records its own keyword tokenizer, not the source's, so the first open of a copy does not
rebuild it.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np
import pytest

from openmemd import cli
from openmemd.api import MemoryIndex
from openmemd.api.admin.store_copy import CopyOrderError, copy_between, copy_index, open_location
from openmemd.config import QuerySettings
from openmemd.search.pipeline import run_search
from openmemd.store import is_database
from openmemd.store.base import IndexStore

NOTES = {
    "MEMORY.md": "# Memory\nThe user's cat is called Miso and hates the vacuum cleaner.\n",
    "memory/2026-11-20.md": "We decided to move the database from MySQL to PostgreSQL next "
                            "quarter.\n",
    "memory/2026-11-21.md": "Alice recommended the novel The Left Hand of Darkness.\n",
    "memory/2026-11-22.md": "我们计划明年春天去日本京都看樱花。\n",
    "memory/2026-11-23.md": "",
    # two files of several chunks each (16-token chunks below), so a file's chunks are not
    # neighbours in id order: the copy must get them together
    "memory/2026-11-24.md": "Deploy notes: the staging cluster moved to the new region.\n"
                            "Rollback plan: keep the old replica for one week.\n"
                            "Owner of the migration is Bob; the budget is approved.\n",
    "memory/2026-11-25.md": "Reading list: a book on distributed systems and one on type "
                            "theory.\nGift ideas: a kettle for Ana, running shoes for Leo.\n",
}
CHUNKS = 11
SECRET = "s3cret-pw"  # the embedded server trusts loopback, so any password connects


SOURCE_CONFIG = '[embedding]\nprovider = "local"\n[chunking]\ntokens = 16\noverlap = 0\n'


@pytest.fixture
def source(make_settings, workspace):
    for rel, text in NOTES.items():
        (workspace / rel).write_text(text, encoding="utf-8")
    settings = make_settings(SOURCE_CONFIG)
    with MemoryIndex.open(workspace, config=settings) as index:
        assert index.sync().chunks == CHUNKS
    return settings


def dump(store: IndexStore) -> dict:
    """Everything a copy carries, vectors as their float32 bytes; the meta row without the
    keyword tokenizer, which is each store's own (checked here)."""
    r = store.reader()
    meta = r.read_meta()
    assert meta is not None and meta.pop("ftsTokenizer") == store.fts_tokenizer

    def chunk(c):
        vector = None if c.vector is None else np.asarray(c.vector, np.float32).tobytes()
        return (*dataclasses.astuple(dataclasses.replace(c, vector=None)), vector)

    return {
        "meta": meta,
        "files": [dataclasses.astuple(f) for f in r.export_files()],
        "chunks": [chunk(c) for c in r.export_chunks()],
        "cache": sorted((e.key.provider, e.key.model, e.key.provider_key, e.hash,
                         np.asarray(e.vector, np.float32).tobytes(), e.updated_at)
                        for e in r.export_cache()),
    }


def hits(store: IndexStore, query: str, vector: np.ndarray, model: str) -> list:
    found = run_search(store.reader(), query, query_vector=vector, model=model,
                       settings=QuerySettings(), max_results=6, min_score=0.0, sources=None,
                       now=time.time(), explain=True)
    return [(h.id, h.path, h.start_line, h.end_line, h.score, h.snippet) for h in found]


def test_sqlite_to_postgres_and_back_is_identical_and_idempotent(source, pg_server, tmp_path):
    settings = source
    src = open_location(str(settings.index_path("main")), settings, "main")
    back = open_location(str(tmp_path / "back" / "copy.sqlite"), settings, "main", create=True)
    with pg_server.fresh_database() as url:
        pg = open_location(url, settings, "main", namespace="team/copy")
        try:
            first = copy_index(src, pg, batch_chunks=2)  # several transactions
            assert (first.files, first.chunks, first.vectors) == (7, CHUNKS, CHUNKS)
            assert first.cache_entries == CHUNKS and first.meta
            copy_index(pg, back)
            original = dump(src)
            assert len(original["chunks"]) == CHUNKS and all(c[-1] for c in original["chunks"])
            assert dump(pg) == original
            assert dump(back) == original

            # the same search answers the same on all three (a chunk's vector as the query)
            vector = np.frombuffer(original["chunks"][0][-1], dtype=np.float32)
            model = original["chunks"][0][6]
            query = "which pet does the user have"
            expected = hits(src, query, vector, model)
            assert expected and expected == hits(back, query, vector, model)
            on_pg = hits(pg, query, vector, model)
            # pgvector computes cosines in float32 (numpy in float64): the last rounded
            # digit of a score may differ, nothing else
            assert [h[:4] + h[5:] for h in on_pg] == [h[:4] + h[5:] for h in expected]
            assert [h[4] for h in on_pg] == pytest.approx([h[4] for h in expected], abs=1e-5)

            # a second run changes nothing, in either direction
            again = copy_index(src, pg, batch_chunks=2)
            assert again == first
            assert dump(pg) == original
            copy_index(pg, back)
            assert dump(back) == original
        finally:
            pg.close()
    src.close()
    back.close()


def test_a_copy_removes_files_the_source_no_longer_has(source, pg_server, tmp_path):
    settings = source
    src = open_location(str(settings.index_path("main")), settings, "main")
    with pg_server.fresh_database() as url:
        pg = open_location(url, settings, "main", namespace="team/copy")
        try:
            copy_index(src, pg)
            w = pg.writer()
            with w.transaction():  # the target holds a file the source does not
                w.upsert_file("memory/extra.md", "memory", "h", 1, 2, 3, 4)
            report = copy_index(src, pg)
            assert report.removed_files == 1
            assert dump(pg) == dump(src)
        finally:
            pg.close()
    src.close()


def test_a_copy_into_postgres_opens_without_a_rebuild(source, pg_server, workspace,
                                                      make_settings):
    """The copy records the PostgreSQL store's tokenizer (it recorded SQLite's, so its first
    open rebuilt every chunk: "index identity changed ... ftsTokenizer") and this workspace
    as the one that fills the namespace, so this workspace's sync goes on from the copy."""
    with pg_server.fresh_database() as url:
        copy_between(str(source.index_path("main")), url, source, "main",
                     namespace="team/copy")
        on_pg = make_settings(f'{SOURCE_CONFIG}[store]\nbackend = "postgres"\nurl = "{url}"\n'
                              'namespace = "team/copy"\n')
        with MemoryIndex.open(workspace, config=on_pg) as index:
            assert index.needs_reindex() == []
            report = index.sync()
            assert not report.reindexed and report.rows_written == 0
            assert report.unchanged == len(NOTES)


def test_cli_copies_and_never_prints_the_password(source, pg_server, tmp_path, capsys):
    settings = source
    config = ["--config", settings.config_file]
    with pg_server.fresh_database() as url:
        secret_url = url.replace("postgres@", f"postgres:{SECRET}@")
        assert SECRET in secret_url
        code = cli.main(["store", "copy", "--from", str(settings.index_path("main")),
                         "--to", secret_url, "--namespace", "team/cli", *config])
        out = capsys.readouterr()
        assert code == 0, out.err
        assert (f"Copied 7 files, {CHUNKS} chunks ({CHUNKS} with vectors) and {CHUNKS} "
                "cached embeddings") in out.out
        assert SECRET not in out.out + out.err
        code = cli.main(["store", "copy", "--from", secret_url, "--from-namespace", "team/cli",
                         "--to", str(tmp_path / "cli.sqlite"), "--json", *config])
        out = capsys.readouterr()
        assert code == 0, out.err
        assert f'"chunks": {CHUNKS}' in out.out and SECRET not in out.out + out.err
    # a missing source is one clear line, exit 1 (not found), no traceback
    code = cli.main(["store", "copy", "--from", str(tmp_path / "missing.sqlite"), "--to",
                     str(tmp_path / "x.sqlite"), *config])
    out = capsys.readouterr()
    assert code != 0 and "no index at" in out.err and "Traceback" not in out.err


def test_an_export_not_grouped_by_file_is_refused(source, tmp_path):
    settings = source
    src = open_location(str(settings.index_path("main")), settings, "main")
    target = open_location(str(tmp_path / "t.sqlite"), settings, "main")

    class Scrambled:
        """The source's reader with one file's chunks split around another's."""

        def __init__(self, reader):
            self._reader = reader

        def __getattr__(self, name):
            return getattr(self._reader, name)

        def export_chunks(self):
            rows = list(self._reader.export_chunks())
            other = next(r for r in rows if r.path != rows[0].path)
            yield from [rows[0], other, rows[0]]

    class ScrambledStore:
        def __getattr__(self, name):
            return getattr(src, name)

        def reader(self):
            return Scrambled(src.reader())

    with pytest.raises(CopyOrderError):
        copy_index(ScrambledStore(), target)  # type: ignore[arg-type]
    src.close()
    target.close()


def test_paths_and_urls_are_told_apart(source, tmp_path):
    store = open_location(str(tmp_path / "a.sqlite"), source, "main")
    try:
        assert store.backend == "sqlite"
        assert Path(store.location()).name == "a.sqlite"
    finally:
        store.close()


def test_a_key_value_connection_string_is_a_database_not_a_file(source, pg_server, tmp_path,
                                                                 monkeypatch, capsys):
    """`store.url` accepts 'host=... dbname=...'; so does `store copy`. It used to become the
    name of a new SQLite file in the current folder."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    assert is_database("host=db.internal dbname=memory") and is_database(" dbname=memory")
    assert is_database("sslrootcert=/etc/ca.pem host=db")  # any of libpq's keywords first
    assert not is_database("./main.sqlite") and not is_database("a=b.sqlite")
    monkeypatch.chdir(tmp_path)
    with pg_server.fresh_database() as url:
        key_value = make_conninfo(**conninfo_to_dict(url))
        assert "://" not in key_value and "dbname=" in key_value
        code = cli.main(["store", "copy", "--from", str(source.index_path("main")), "--to",
                         key_value, "--namespace", "team/kv", "--config", source.config_file])
        assert code == 0, capsys.readouterr().err
        assert not [p.name for p in tmp_path.iterdir() if "dbname" in p.name]
        pg = open_location(url, source, "main", namespace="team/kv")
        src = open_location(str(source.index_path("main")), source, "main")
        try:
            assert dump(pg) == dump(src)
        finally:
            pg.close()
            src.close()
