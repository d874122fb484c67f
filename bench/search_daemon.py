"""The real daemon on a large synthetic index: RSS after searches, edit -> searchable.

Used by bench/search.py (its last step). openmemd creates the index for a one-note workspace
(its meta: model, chunking), then the synthetic chunks of a bench database are copied in
(chunks, keyword rows, vectors; their files are not in the workspace nor in `files`, so syncs
leave them alone), and the daemon is started on it with the local model.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from daemon import edit_to_searchable, proc_rss, wait_until_answering
from openmemd.api import MemoryIndex
from openmemd.client import Client
from openmemd.config import load_settings
from openmemd.store.sqlite import db

DEBOUNCE_MS = 300


def prepare(src: Path, root: Path) -> tuple[Path, Path]:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\nThe bench workspace starts here.\n")
    cfg = root / "config.toml"
    cfg.write_text(f'[embedding]\nprovider = "local"\n'
                   f"[sync]\nwatch_debounce_ms = {DEBOUNCE_MS}\n")
    settings = load_settings(str(cfg), overrides={"workspace": str(ws),
                                                  "state_dir": str(root / "state")})
    with MemoryIndex.open(ws, config=settings) as index:
        index.sync()
        path = index.db_path
    started = time.monotonic()
    conn, _ = db.connect(path)
    try:
        conn.execute("ATTACH DATABASE ? AS src", (f"file:{src}?mode=ro",))
        offset = 1_000_000  # chunk rowids clear of the workspace's own; FTS rowid = chunk rowid
        with db.write_transaction(conn):
            conn.execute(
                "INSERT INTO chunks(rowid, id, path, source, start_line, end_line, hash, model,"
                " text, embedding, updated_at) SELECT rowid + ?, id, path, source, start_line,"
                " end_line, hash, model, text, embedding, updated_at FROM src.chunks", (offset,))
            conn.execute(
                "INSERT INTO chunks_fts(rowid, text, id, path, source, model, start_line,"
                " end_line) SELECT rowid + ?, text, id, path, source, model, start_line,"
                " end_line FROM src.chunks_fts", (offset,))
            conn.execute("INSERT INTO chunks_vec(id, embedding) "
                         "SELECT id, embedding FROM src.chunks_vec")
        conn.execute("DETACH DATABASE src")
        conn.execute("ANALYZE")  # statistics of a 100k index, not of the one-note index
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        count = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    finally:
        conn.close()
    print(f"  daemon index: {count} chunks copied in {time.monotonic() - started:.0f}s",
          flush=True)
    return ws, cfg


def run(src: Path, work: Path, queries: list[str], in_process_ms: float) -> None:
    """`in_process_ms`: p50 of the same searches in process (query embedding + hybrid)."""
    root = Path(tempfile.mkdtemp(dir=work, prefix="daemon-"))
    proc = None
    try:
        ws, cfg = prepare(src, root)
        endpoint = f"ipc://{root}/d.sock"
        env = {**os.environ, "OPENMEMD_ENDPOINT": endpoint}
        cmd = [sys.executable, "-m", "openmemd", "run", "--foreground", "--config", str(cfg),
               "--workspace", str(ws), "--state-dir", str(root / "state")]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        wait_until_answering(endpoint, proc, pause=0.05)
        with Client(endpoint, timeout=120) as c:
            c.sync()
            times, took = [], []
            for q in queries:
                t = time.perf_counter()
                took.append(c.search(q)["tookMs"])
                times.append((time.perf_counter() - t) * 1000)
            rss = proc_rss(proc.pid)
            p50 = statistics.median(times[1:])
            print(f"daemon on {src.name}: search over the socket (first includes any wait for "
                  f"the matrix) first {times[0]:.0f} ms, then p50 {p50:.1f} ms (in the daemon "
                  f"{statistics.median(took[1:]):.1f} ms) = {p50 / in_process_ms:.2f}x the "
                  f"in-process search, {in_process_ms:.1f} ms (goal ≤ 1.3x); "
                  f"RSS {rss / 1048576:.0f} MiB = {rss / 1e6:.0f} MB (goal ≤ 400 MB)")
            latencies = edit_to_searchable(c, ws)
            rss = proc_rss(proc.pid)
            print(f"  edit -> searchable: median {statistics.median(latencies):.2f} s, max "
                  f"{max(latencies):.2f} s (debounce {DEBOUNCE_MS / 1000:.1f} s); RSS after "
                  f"{rss / 1048576:.0f} MiB = {rss / 1e6:.0f} MB")
        proc.terminate()
        proc.wait(30)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        shutil.rmtree(root, ignore_errors=True)
