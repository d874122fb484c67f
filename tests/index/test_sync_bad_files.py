"""One odd file never stops a sync: it is indexed if it can be, else skipped with its reason
(logged once, listed in the report), and every other file is indexed. Real files, real index."""

from __future__ import annotations

import json
import os

import pytest
from structlog.testing import capture_logs

from openmemd.api import MemoryIndex
from openmemd.index import sync as sync_module
from openmemd.store.sqlite import db

GOOD = {f"memory/good-{i}.md": f"A good note about the heron number {i}.\n" for i in range(4)}


def open_index(make_settings, workspace, toml=""):
    return MemoryIndex.open(workspace, config=make_settings(toml))


def indexed_paths(index) -> set[str]:
    conn, _ = db.connect(index.db_path)
    try:
        return {r[0] for r in conn.execute("SELECT path FROM files")}
    finally:
        conn.close()


def write_good(workspace) -> None:
    for rel, text in GOOD.items():
        (workspace / rel).write_text(text)


def transcript(*records: str) -> str:
    return "\n".join(records) + "\n"


def message(text: str, extra: str = "") -> str:
    return ('{"type": "message"' + extra + ', "message": {"role": "user", "content": '
            + json.dumps(text) + "}}")


def test_a_line_repeating_one_phrase_is_indexed_not_a_unique_id_error(make_settings,
                                                                       workspace):
    # Identical sub-chunks of one long line used to share a chunk id (UNIQUE constraint).
    write_good(workspace)
    (workspace / "memory" / "laugh.md").write_text("ha " * 3000 + "\n")
    with open_index(make_settings, workspace) as index:
        report = index.sync()
        assert report.skipped == []
        assert indexed_paths(index) == {*GOOD, "memory/laugh.md"}
        conn, _ = db.connect(index.db_path)
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE path='memory/laugh.md'")]
        conn.close()
        assert len(ids) > 2 and len(set(ids)) == len(ids)
        # a second sync of the same file is stable (no duplicate left over, nothing re-indexed)
        (workspace / "memory" / "laugh.md").write_text("ha " * 3001 + "\n")
        assert index.sync().skipped == []


def test_ids_stay_openclaw_compatible_where_unique(make_settings, workspace):
    from openmemd.index.chunking import chunk_id

    (workspace / "MEMORY.md").write_text("# Memory\nThe heron is grey.\n")
    with open_index(make_settings, workspace) as index:
        index.sync()
        conn, _ = db.connect(index.db_path)
        row = conn.execute("SELECT id, source, path, start_line, end_line, hash, model "
                           "FROM chunks").fetchone()
        conn.close()
    assert row[0] == chunk_id(*row[1:])


def test_a_file_name_that_is_not_utf8_is_skipped_with_its_reason(make_settings, workspace):
    write_good(workspace)
    bad = os.fsencode(workspace / "memory") + b"/bad-\xff\xfe-name.md"
    with open(bad, "wb") as fh:
        fh.write(b"a note under a latin-1 name\n")
    with open_index(make_settings, workspace) as index:
        report = index.sync()
        assert indexed_paths(index) == set(GOOD)
        [issue] = report.skipped
        assert issue.path == "memory/bad-\\xff\\xfe-name.md"
        assert "UTF-8" in issue.reason
        json.dumps(report.to_dict(), ensure_ascii=False).encode("utf-8")  # always encodable
        assert index.search("heron", min_score=0)


@pytest.mark.parametrize("records", [
    pytest.param((message("the otter stamp", ', "timestamp": 1e400'),), id="timestamp-1e400"),
    pytest.param((message("the otter nan", ', "timestamp": NaN'),), id="timestamp-nan"),
    pytest.param((message("the otter int", ', "timestamp": 1' + "0" * 400),),
                 id="timestamp-huge-int"),
    pytest.param(('{"type": "message", "message": {"role": "user", "content": '
                  '"the otter \\ud800 surrogate"}}',), id="lone-surrogate"),
    pytest.param(("[" * 100_000, message("the otter after deep junk")), id="deep-nesting"),
    # A NUL byte early on (a torn write, a preallocated block) costs only its own line.
    pytest.param((message("a line torn") + "\x00\x00", message("the otter after a NUL")),
                 id="nul-byte-early"),
    pytest.param(("\x00" * 9000, message("the otter after NUL blocks")), id="nul-block"),
    pytest.param((message("the otter \x00 escaped NUL"),), id="nul-escape"),
])
def test_an_odd_transcript_line_never_stops_the_sync(make_settings, workspace, records):
    write_good(workspace)
    (workspace / "sessions").mkdir()
    (workspace / "sessions" / "odd.jsonl").write_text(transcript(*records))
    with open_index(make_settings, workspace, 'sources = ["memory", "sessions"]\n') as index:
        report = index.sync()
        assert report.skipped == []
        assert indexed_paths(index) == {*GOOD, "sessions/odd.jsonl"}
        assert index.search("otter", sources=["sessions"], min_score=0)


def test_an_unexpected_error_in_one_file_skips_only_that_file_and_is_logged_once(
        make_settings, workspace, monkeypatch):
    # Fault injection for the general rule (whatever a file triggers that no check foresaw):
    # the real chunker fails for one file only.
    real = sync_module.chunk_text

    def chunk_text(text, **kw):
        if "EXPLODE" in text:
            raise RuntimeError("chunker exploded")
        return real(text, **kw)

    monkeypatch.setattr(sync_module, "chunk_text", chunk_text)
    write_good(workspace)
    (workspace / "memory" / "explode.md").write_text("EXPLODE here\n")
    with open_index(make_settings, workspace) as index, capture_logs() as logs:
        first = index.sync()
        second = index.sync()
        assert indexed_paths(index) == set(GOOD)
        for report in (first, second):
            assert [(i.path, i.reason) for i in report.skipped] == [
                ("memory/explode.md", "RuntimeError: chunker exploded")]
        skipped_logs = [e for e in logs if e.get("path") == "memory/explode.md"]
        assert len(skipped_logs) == 1, skipped_logs
        report = index.status().last_sync.report
        assert report is not None and report["skipped"] == [
            {"path": "memory/explode.md", "reason": "RuntimeError: chunker exploded"}]
        # once the file changes it is tried again
        (workspace / "memory" / "explode.md").write_text("fine now, heron\n")
        assert index.sync().skipped == []
        assert "memory/explode.md" in indexed_paths(index)


def test_skipped_file_removed_from_disk_leaves_no_trace(make_settings, workspace):
    write_good(workspace)
    bad = os.fsencode(workspace / "memory") + b"/bad-\xff.md"
    with open(bad, "wb") as fh:
        fh.write(b"x\n")
    with open_index(make_settings, workspace) as index:
        assert len(index.sync().skipped) == 1
        os.unlink(bad)
        assert index.sync().skipped == []


def test_same_size_edit_with_restored_mtime_is_reindexed(make_settings, workspace):
    note = workspace / "memory" / "touched.md"
    note.write_text("The password hint is walrus.\n")
    with open_index(make_settings, workspace) as index:
        index.sync()
        assert index.search("walrus")[0].path == "memory/touched.md"
        st = os.stat(note)
        note.write_text("The password hint is narwal.\n")  # same size
        os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))  # `touch -r`
        assert os.stat(note).st_size == st.st_size
        index.sync()
        assert [h.path for h in index.search("narwal")] == ["memory/touched.md"]
        assert index.search("walrus") == []
    # a fresh process (the CLI) sees it too: the signal is stored, not only in memory
    note.write_text("The password hint is beluga.\n")
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
    with open_index(make_settings, workspace) as index:
        index.sync()
        assert [h.path for h in index.search("beluga")] == ["memory/touched.md"]


@pytest.mark.parametrize("path", ["memory/\ud800.md", "memory/bad-\udcff.md"])
def test_get_of_a_path_that_is_not_utf8_is_a_bad_request(make_settings, workspace, path):
    from openmemd.errors import BadRequestError

    with open_index(make_settings, workspace) as index, \
            pytest.raises(BadRequestError, match="UTF-8"):
        index.get(path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any directory")
def test_an_unreadable_sessions_folder_never_stops_the_sync(make_settings, workspace):
    write_good(workspace)
    (workspace / "sessions").mkdir(mode=0o000)
    try:
        with open_index(make_settings, workspace, 'sources = ["memory", "sessions"]\n') as ix:
            ix.sync()
            assert indexed_paths(ix) == set(GOOD)
    finally:
        (workspace / "sessions").chmod(0o700)
