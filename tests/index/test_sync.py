"""Incremental sync on real files and a real SQLite index (keyword-only: no model needed)."""

import os
import time

import pytest

from openmemd.api import MemoryIndex
from openmemd.store.sqlite import db


def open_index(make_settings, workspace, toml=""):
    return MemoryIndex.open(workspace, config=make_settings(toml))


def rows(index, sql, *args):
    conn, _ = db.connect(index.db_path)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def test_exact_schema(make_settings, workspace):
    (workspace / "MEMORY.md").write_text("# Memory\nhello\n")
    with open_index(make_settings, workspace) as index:
        index.sync()
        cols = {t: [r[1] for r in rows(index, f"PRAGMA table_info({t})")]
                for t in ("meta", "files", "chunks", "embedding_cache", "chunks_fts")}
        assert cols["meta"] == ["key", "value"]
        assert cols["files"] == ["path", "source", "hash", "mtime", "size"]
        assert cols["chunks"] == ["id", "path", "source", "start_line", "end_line", "hash",
                                  "model", "text", "embedding", "updated_at"]
        assert cols["embedding_cache"] == ["provider", "model", "provider_key", "hash",
                                           "embedding", "dims", "updated_at"]
        assert cols["chunks_fts"] == ["text", "id", "path", "source", "model", "start_line",
                                      "end_line"]
        indexes = {r[0] for r in rows(index, "SELECT name FROM sqlite_master WHERE type='index'"
                                             " AND name LIKE 'idx_%'")}
        # OpenClaw's three, and ours of the chunks waiting for a vector (SQLite keeps it
        # current whoever writes)
        assert indexes == {"idx_chunks_path", "idx_chunks_source",
                           "idx_embedding_cache_updated_at", "idx_chunks_pending"}
        assert rows(index, "PRAGMA journal_mode")[0][0] == "wal"
        assert index.status().provider.model == "fts-only"
        stored = rows(index, "SELECT value FROM meta WHERE key='memory_index_meta_v1'")[0][0]
        assert '"model": "fts-only"' in stored and '"chunkTokens": 400' in stored
        assert rows(index, "SELECT model, embedding FROM chunks")[0] == ("fts-only", "[]")


def test_incremental_change_delete_rename_and_untouched(make_settings, workspace):
    notes = workspace / "memory"
    (workspace / "MEMORY.md").write_text("# Memory\nThe user likes green tea.\n")
    (notes / "2026-01-01.md").write_text("Went hiking at Mount Tam.\n")
    (notes / "2026-01-02.md").write_text("Fixed the flaky deploy script.\n")
    with open_index(make_settings, workspace) as index:
        first = index.sync()
        assert (first.scanned, first.indexed, first.unchanged) == (3, 3, 0)
        before = dict(rows(index, "SELECT path, updated_at FROM chunks"))
        time.sleep(0.01)

        again = index.sync()
        assert (again.indexed, again.unchanged, again.deleted) == (0, 3, 0)

        (notes / "2026-01-01.md").write_text("Went kayaking on Tomales Bay.\n")
        os.rename(notes / "2026-01-02.md", notes / "2026-01-03.md")
        os.utime(workspace / "MEMORY.md")  # touched, same content: hash short-circuit
        report = index.sync()
        assert report.indexed == 2 and report.deleted == 1 and report.unchanged == 1
        after = dict(rows(index, "SELECT path, updated_at FROM chunks"))
        assert after["MEMORY.md"] == before["MEMORY.md"]  # never rewritten
        assert "memory/2026-01-02.md" not in after and "memory/2026-01-03.md" in after
        assert [r.path for r in index.search("kayaking")] == ["memory/2026-01-01.md"]
        assert all("hiking" not in r.snippet for r in index.search("hiking", min_score=0))

        (notes / "2026-01-03.md").unlink()
        report = index.sync()
        assert report.deleted == 1
        paths = {r[0] for r in rows(index, "SELECT path FROM files")}
        assert paths == {"MEMORY.md", "memory/2026-01-01.md"}
        fts_paths = {r[0] for r in rows(index, "SELECT path FROM chunks_fts")}
        assert fts_paths == paths


def test_only_memory_files_are_indexed(make_settings, workspace):
    (workspace / "memory.md").write_text("lowercase memory file\n")
    (workspace / "notes.md").write_text("not a memory file\n")
    (workspace / "memory" / "deep" / "nested").mkdir(parents=True)
    (workspace / "memory" / "deep" / "nested" / "2026-02-02.md").write_text("nested note\n")
    (workspace / "memory" / "image.png").write_bytes(b"\x89PNG")
    (workspace / "memory" / ".dreams").mkdir()
    (workspace / "memory" / ".dreams" / "x.md").write_text("dreaming state, not memory\n")
    (workspace / "extra").mkdir()
    (workspace / "extra" / "doc.md").write_text("an extra path\n")
    with open_index(make_settings, workspace, 'extra_paths = ["extra", "/etc"]\n') as index:
        index.sync()
        paths = {r[0] for r in rows(index, "SELECT path FROM files")}
    assert paths == {"memory.md", "memory/deep/nested/2026-02-02.md", "extra/doc.md"}


def test_symlinks_never_followed(make_settings, workspace, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("TOP SECRET outside the workspace\n")
    os.symlink(outside / "secret.md", workspace / "memory" / "link.md")
    os.symlink(outside, workspace / "memory" / "linkdir")
    os.symlink(outside / "secret.md", workspace / "MEMORY.md")
    (workspace / "memory" / "real.md").write_text("a real note\n")
    with open_index(make_settings, workspace) as index:
        index.sync()
        paths = {r[0] for r in rows(index, "SELECT path FROM files")}
        assert paths == {"memory/real.md"}
        assert index.search("secret", min_score=0) == []


def test_bad_files_are_skipped_with_a_warning_and_sync_goes_on(make_settings, workspace):
    notes = workspace / "memory"
    (notes / "binary.md").write_bytes(b"\x00\x01\x02binary\x00" * 10)
    (notes / "latin1.md").write_bytes("café crème brûlée\n".encode("latin-1"))
    (notes / "huge.md").write_text("x" * 5000 + "\n")
    (notes / "good.md").write_text("a good note about espresso\n")
    with open_index(make_settings, workspace, "[sync]\nmax_file_bytes = 4096\n") as index:
        report = index.sync()
        skipped = {i.path: i.reason for i in report.skipped}
        warned = {i.path: i.reason for i in report.warnings}
        assert set(skipped) == {"memory/binary.md", "memory/huge.md"}
        assert "binary" in skipped["memory/binary.md"]
        assert "cap" in skipped["memory/huge.md"]
        assert "UTF-8" in warned["memory/latin1.md"]
        assert index.search("espresso")[0].path == "memory/good.md"
        assert index.search("caf cr me", min_score=0)[0].path == "memory/latin1.md"
        # a file that grows past the cap loses its stale rows
        (notes / "good.md").write_text("y" * 5000)
        index.sync()
        paths = {r[0] for r in rows(index, "SELECT path FROM files")}
        assert "memory/good.md" not in paths
    assert (notes / "latin1.md").read_bytes() == "café crème brûlée\n".encode("latin-1")


def test_sessions_are_rendered_redacted_and_point_at_jsonl_lines(make_settings, workspace):
    sessions = workspace / "sessions"
    sessions.mkdir()
    lines = [
        '{"type": "session", "id": "s1"}',
        '{"type": "message", "message": {"role": "user", "content": "my key is '
        'sk-abcdefghijklmnopqrstuvwxyz123456, deploy the penguin service"}}',
        '{"type": "message", "message": {"role": "tool", "content": "tool output"}}',
        "not json at all",
        '{"type": "message", "message": {"role": "assistant", "content": [{"type": "text", '
        '"text": "Deploying the penguin service now."}]}}',
    ]
    (sessions / "s1.jsonl").write_text("\n".join(lines) + "\n")
    with open_index(make_settings, workspace, 'sources = ["memory", "sessions"]\n') as index:
        index.sync()
        hits = index.search("penguin", sources=["sessions"])
        assert hits and hits[0].source == "sessions" and hits[0].path == "sessions/s1.jsonl"
        assert (hits[0].start_line, hits[0].end_line) == (2, 5)
        text = rows(index, "SELECT text FROM chunks WHERE source='sessions'")[0][0]
        assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in text
        assert "sk-abc" in text and "tool output" not in text
        assert text.startswith("User: my key is") and "Assistant: Deploying" in text


def test_corrupt_index_is_rebuilt_from_markdown(make_settings, workspace):
    (workspace / "MEMORY.md").write_text("The launch code word is marmalade.\n")
    settings = make_settings()
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        path = index.db_path
    path.write_bytes(b"this is not a database" * 100)
    for sidecar in ("-wal", "-shm"):
        if os.path.exists(f"{path}{sidecar}"):
            os.unlink(f"{path}{sidecar}")
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        assert index.search("marmalade")[0].path == "MEMORY.md"
    assert list(path.parent.glob("main.sqlite.corrupt-*"))
    assert (workspace / "MEMORY.md").read_text() == "The launch code word is marmalade.\n"


def test_second_writer_is_refused(make_settings, workspace):
    from openmemd.errors import IndexLockedError

    (workspace / "MEMORY.md").write_text("hello\n")
    settings = make_settings()
    with MemoryIndex.open(workspace, config=settings) as one:
        one.sync()
        with MemoryIndex.open(workspace, config=settings) as two:
            with pytest.raises(IndexLockedError, match="another openmemd process"):
                two.sync()
            assert two.search("hello")  # readers are never blocked


def test_get_reads_lines_and_refuses_escapes(make_settings, workspace, tmp_path):
    from openmemd.errors import BadRequestError, ForbiddenError, NotFoundError

    (workspace / "MEMORY.md").write_text("one\ntwo\nthree\nfour\n")
    (workspace / "DREAMS.md").write_text("# Dream Diary\n")
    (workspace / "secret.md").write_text("not memory\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("outside\n")
    os.symlink(outside, workspace / "memory" / "linked")
    (workspace / "memory" / "notes.txt").write_text("txt\n")
    with open_index(make_settings, workspace) as index:
        got = index.get("MEMORY.md", from_line=2, lines=2)
        assert got["text"] == "two\nthree" and got["from"] == 2 and got["totalLines"] == 4
        assert index.get("DREAMS.md")["text"] == "# Dream Diary\n"
        with pytest.raises(NotFoundError):
            index.get("memory/2026-01-01.md")
        for bad in ("../outside/x.md", "secret.md", "memory/linked/x.md", "memory/notes.txt",
                    str(outside / "x.md"), "/etc/passwd"):
            with pytest.raises(ForbiddenError):
                index.get(bad)
        with pytest.raises(BadRequestError):
            index.get("MEMORY.md", from_line=0)
