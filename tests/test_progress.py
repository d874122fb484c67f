"""Long work says how it goes: per-batch progress with rate and ETA (CLI bar, daemon log,
`status`), and `openmemd index` against a daemon that is filling vectors returns at once.

The slow part is an OpenAI-compatible embedding server on loopback that answers slowly on
purpose (it stands in for a remote provider); the provider code, the index, the indexer and
the daemon are the real ones.
"""

from __future__ import annotations

import io
import itertools
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

import openmemd.server.indexer as indexer_mod
from daemon_harness import Daemon, make_daemon
from helpers import wait_for
from openai_fake import JsonHandler, QuietServer, embeddings_payload
from openmemd.api import MemoryIndex
from openmemd.progress import ProgressBar, ProgressMeter
from openmemd.server.indexer import Indexer


class SlowEmbeddings:
    """OpenAI `POST /v1/embeddings`, `delay` seconds per request (changeable at any time)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.requests = 0
        server = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                body = self.read_json()
                server.requests += 1
                time.sleep(server.delay)
                self.reply(200, embeddings_payload(body))

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def config(self, batch_size: int) -> str:
        return (f'[embedding]\nprovider = "openai"\nbase_url = "{self.url}"\n'
                f'model = "slow-embed"\nbatch_size = {batch_size}\nworkers = 1\n')

    def close(self) -> None:
        self.delay = 0
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def slow() -> Iterator[SlowEmbeddings]:
    srv = SlowEmbeddings(0.02)
    yield srv
    srv.close()


def write_notes(root: Any, count: int) -> None:
    for i in range(count):
        (root / "memory" / f"n{i:03d}.md").write_text(f"note number {i} about progress\n")


def test_fill_reports_every_batch_with_rate_and_eta(make_settings, workspace, slow) -> None:
    write_notes(workspace, 12)
    calls: list[tuple[str, int, int]] = []
    meter = ProgressMeter()
    snaps = []

    def progress(phase: str, done: int, total: int) -> None:
        calls.append((phase, done, total))
        snaps.append(meter.update(phase, done, total))

    with MemoryIndex.open(workspace, config=make_settings(slow.config(batch_size=2))) as index:
        report = index.sync(progress=progress)
    assert report.vectors_embedded == 12
    vectors = [(done, total) for phase, done, total in calls if phase == "vectors"]
    # One update when the fill starts and one per batch of 2, never a whole page at once.
    assert vectors[0] == (0, 12) and vectors[-1] == (12, 12)
    assert len(vectors) == 7
    assert all(0 < b[0] - a[0] <= 2 for a, b in itertools.pairwise(vectors))
    middle = [s for s in snaps if s.phase == "vectors" and 0 < s.done < s.total]
    assert middle and all(s.rate > 0 and s.eta_s is not None for s in middle)


def test_cli_bar_shows_chunks_rate_and_eta() -> None:
    now = [100.0]
    out = io.StringIO()
    bar = ProgressBar(True, stream=out, clock=lambda: now[0])
    bar("vectors", 0, 400)
    now[0] += 10
    bar("vectors", 100, 400)  # 100 chunks in 10 s: 10/s, 300 left: 30 s
    line = out.getvalue().split("\r")[-1]
    assert "100/400 chunks" in line and "10.0 chunks/s" in line and "eta 30s" in line
    now[0] += 30
    bar("vectors", 400, 400)
    assert out.getvalue().endswith("\n")
    silent = io.StringIO()
    ProgressBar(False, stream=silent)("vectors", 1, 2)
    assert silent.getvalue() == ""


def test_daemon_indexer_logs_and_shows_progress(make_settings, workspace, slow,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    write_notes(workspace, 30)
    slow.delay = 0.05
    monkeypatch.setattr(indexer_mod, "PROGRESS_LOG_S", 0.2)  # ~10 s in the daemon
    with MemoryIndex.open(workspace, config=make_settings(slow.config(batch_size=1))) as index, \
            structlog.testing.capture_logs() as logs:
        ix = Indexer(index, name="p")
        ix.start()
        try:
            ix.request_reconcile("test")
            seen: list[dict] = []

            def filling() -> bool:
                p = ix.status().progress
                if p and p["phase"] == "vectors" and 0 < p["done"] < p["total"]:
                    seen.append(p)
                return bool(seen) and seen[-1]["etaSeconds"] is not None
            assert wait_for(filling, 30)
            assert seen[-1]["total"] == 30 and seen[-1]["rate"] > 0
            assert wait_for(lambda: ix.state == "idle" and ix.last_reconcile is not None, 60)
            assert ix.status().progress is None  # nothing runs: nothing to show
        finally:
            ix.stop()
    lines = [e for e in logs if e["event"] == "index_progress"]
    assert lines, [e["event"] for e in logs]
    assert {"phase", "done", "total", "rate", "eta_s"} <= set(lines[-1])


# -- `openmemd index` against a daemon that is filling --------------------------------------------

@pytest.fixture
def filling() -> Iterator[tuple[Daemon, SlowEmbeddings]]:
    srv = SlowEmbeddings(0.5)  # 120 batches of one chunk: a minute of embedding
    gen = make_daemon(srv.config(batch_size=1) + "[sync]\nwatch_debounce_ms = 100\n")
    d = next(gen)
    try:
        yield d, srv
    finally:
        srv.delay = 0  # let the daemon finish and stop
        gen.close()
        srv.close()


def test_index_returns_with_keywords_done_while_the_daemon_fills(filling) -> None:
    d, srv = filling
    write_notes(d.workspace, 120)
    d.start()

    def agent() -> dict:
        with d.client() as c:
            return c.status()["agents"]["main"]

    def embedding() -> bool:
        p = agent().get("progress") or {}
        return p.get("phase") == "vectors" and p["done"] >= 2

    assert wait_for(embedding, 60)
    progress = agent()["progress"]
    assert progress["total"] == 120
    assert progress["rate"] > 0 and progress["etaSeconds"] is not None

    (d.workspace / "memory" / "fresh.md").write_text("the pangolin ledger\n")
    out = d.cli("index", timeout=40)  # the whole fill would take about a minute
    assert out.returncode == 0, out.stderr
    assert "121 files scanned" in out.stdout
    assert "chunks still waiting for a vector" in out.stdout, out.stdout
    with d.client() as c:  # the keyword part is searchable at once
        hits = c.search("pangolin ledger", min_score=0.0)["results"]
    assert any(h["path"] == "memory/fresh.md" for h in hits)
    assert "Progress: vectors" in d.cli("status").stdout
    # A forced rebuild swaps in its keyword rows (and cached vectors) without embedding first.
    forced = d.cli("index", "--force", timeout=40)
    assert forced.returncode == 0, forced.stderr
    assert "(full rebuild)" in forced.stdout and "still waiting for a vector" in forced.stdout

    srv.delay = 0
    assert wait_for(lambda: agent()["pendingVectors"] == 0 and agent()["progress"] is None, 60)
    assert d.stop() == 0
