"""`openmemd store copy` killed with SIGKILL half-way, both directions: the target is a
consistent index at every moment (each file it lists has exactly the source's chunks for it,
no chunk without its file), and running the copy again finishes it, row for row."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psycopg
import pytest
from test_store_copy import dump

from openmemd.api.admin.store_copy import copy_index, open_location
from openmemd.index.identity import IndexIdentity
from openmemd.store.base import CacheKey, ChunkRow, IndexStore
from openmemd.text.tokens import fts_index_text

FILES, PER_FILE, DIMS = 400, 10, 8
NS = "team/killed"


def synthetic_source(path: Path, settings) -> IndexStore:
    """A SQLite index of FILES files x PER_FILE chunks with vectors and cache entries, written
    through the store (embedding thousands of chunks with the real model would take minutes)."""
    store = open_location(str(path), settings, "main", create=True)
    rng = np.random.default_rng(5)
    w = store.writer()
    with w.transaction():
        w.write_meta(IndexIdentity(provider="local", model="m", provider_key="k", dims=DIMS,
                                   sources=("memory",), extra_paths=(), chunk_tokens=400,
                                   chunk_overlap=80, fts_tokenizer=store.fts_tokenizer
                                   ).to_meta())
    for f in range(FILES):
        rel = f"memory/2026-01-{f:04d}.md"
        rows = []
        for k in range(PER_FILE):
            text = f"note {f} part {k}: the deploy of service {f % 17} moved to region {k}"
            vec = rng.standard_normal(DIMS).astype(np.float32)
            rows.append(ChunkRow(id=f"c{f}-{k}", path=rel, source="memory", start_line=k + 1,
                                 end_line=k + 1, hash=f"h{f}-{k}", model="m", text=text,
                                 fts_text=fts_index_text(text), vector=vec / np.linalg.norm(vec),
                                 updated_at=1000 + f))
        with w.transaction():
            w.upsert_file(rel, "memory", f"fh{f}", 1000 + f, 100, 5, f)
            w.replace_chunks(rel, rows)
            w.cache_store(CacheKey("local", "m", "k"),
                          [(r.hash, r.vector) for r in rows if r.vector is not None], 1000 + f)
    return store


def consistent(target: IndexStore, source_dump: dict) -> int:
    """Assert the target is a consistent part of the source; its number of files."""
    r = target.reader()
    files = {f.path for f in r.export_files()}
    chunks: dict[str, set] = {}
    for c in r.export_chunks():
        chunks.setdefault(c.path, set()).add((c.id, c.text, c.hash))
    expected: dict[str, set] = {}
    for c in source_dump["chunks"]:
        expected.setdefault(c[1], set()).add((c[0], c[7], c[5]))
    assert set(chunks) <= files  # no chunk without its file
    for path in files:
        assert chunks.get(path, set()) == expected[path], path
    return len(files)


def copied_chunks(location: str) -> int:
    try:
        if location.startswith("postgresql://"):
            with psycopg.connect(location, connect_timeout=5) as conn:
                row = conn.execute("SELECT count(*) FROM openmemd.chunks WHERE ns = %s",
                                   (NS,)).fetchone()
        else:
            with sqlite3.connect(f"file:{location}?mode=ro", uri=True, timeout=5) as conn:
                row = conn.execute("SELECT count(*) FROM chunks").fetchone()
    except (psycopg.Error, sqlite3.Error):
        return 0  # not created yet
    return int(row[0]) if row else 0


def copy_killed_half_way(settings, source: str, target: str, tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "openmemd", "store", "copy", "--from", source, "--to", target,
           "--namespace", NS, "--batch", "20", "--config", settings.config_file]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "HOME": str(tmp_path)})
    deadline = time.monotonic() + 120
    while copied_chunks(target) == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, (out, err)  # killed, not finished


@pytest.mark.parametrize("direction", ["sqlite->postgres", "postgres->sqlite"])
def test_a_copy_killed_half_way_leaves_a_consistent_target_and_a_rerun_finishes_it(
        direction, make_settings, pg_server, tmp_path):
    settings = make_settings()
    sqlite_source = synthetic_source(tmp_path / "src" / "main.sqlite", settings)
    with pg_server.fresh_database() as url:
        if direction == "sqlite->postgres":
            source, target = str(tmp_path / "src" / "main.sqlite"), url
        else:
            pg = open_location(url, settings, "main", namespace=NS)
            copy_index(sqlite_source, pg)
            pg.close()
            source, target = url, str(tmp_path / "dst" / "main.sqlite")
        src = open_location(source, settings, "main", namespace=NS if "://" in source else None)
        original = dump(src)
        assert len(original["chunks"]) == FILES * PER_FILE

        copy_killed_half_way(settings, source, target, tmp_path)
        dst = open_location(target, settings, "main", namespace=NS if "://" in target else None,
                            create=True)
        try:
            files = consistent(dst, original)
            assert 0 < files < FILES  # it was killed in the middle of the files
            report = copy_index(src, dst, batch_chunks=20)
            assert (report.files, report.chunks) == (FILES, FILES * PER_FILE)
            assert dump(dst) == original
        finally:
            dst.close()
            src.close()
    sqlite_source.close()
