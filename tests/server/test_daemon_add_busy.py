"""`add` while the writer thread is busy (issue 43): a note is an append to a Markdown file,
answered whatever the indexer is doing, and `ping` and `status` never wait behind adds or the
indexer. The indexer is held deterministically: its embedding provider (a fake OpenAI server on
loopback) does not answer a batch of the workspace's notes until the test releases it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from daemon_harness import Daemon, finds, make_daemon
from helpers import wait_for
from openai_fake import JsonHandler, QuietServer, embeddings_payload
from openmemd.client import Client

pytestmark = pytest.mark.slow

MARKER = "walrus"  # in every note of the workspace, never in the warm-up query


class HeldEmbeddings:
    """OpenAI `POST /v1/embeddings`; a batch holding MARKER waits until `release` is set."""

    def __init__(self) -> None:
        self.held = threading.Event()  # a batch of notes is being held: the writer waits
        self.release = threading.Event()
        server = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                body = self.read_json()
                if any(MARKER in text for text in body["input"]):
                    server.held.set()
                    server.release.wait(600)
                self.reply(200, embeddings_payload(body))

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def held() -> Iterator[HeldEmbeddings]:
    srv = HeldEmbeddings()
    yield srv
    srv.close()


@pytest.fixture
def daemon(held: HeldEmbeddings) -> Iterator[Daemon]:
    yield from make_daemon(
        f'[embedding]\nprovider = "openai"\nbase_url = "{held.url}"\nmodel = "held-embed"\n'
        'batch_size = 4\nworkers = 1\ntimeout_seconds = 900\nmax_retries = 0\n'
        '[sync]\nwatch_debounce_ms = 100\n')


def answer_all(endpoint: str, calls: dict[str, Callable[[Client], Any]],
               timeout: float) -> dict[str, Any]:
    """Run every call at once, each on its own connection; its reply, or the exception."""
    def one(call: Callable[[Client], Any]) -> Any:
        try:
            with Client(endpoint, timeout=timeout) as c:
                return call(c)
        except Exception as exc:
            return exc

    with ThreadPoolExecutor(len(calls)) as pool:
        futures = {name: pool.submit(one, call) for name, call in calls.items()}
        return {name: fut.result() for name, fut in futures.items()}


def test_adds_status_and_ping_answer_while_the_indexer_is_held(
        daemon: Daemon, held: HeldEmbeddings) -> None:
    for i in range(12):
        (daemon.workspace / "memory" / f"2026-01-{i + 1:02d}.md").write_text(
            f"# day {i}\n\nThe {MARKER} number {i} sunbathes on the rocks.\n")
    daemon.start()
    assert held.held.wait(120), daemon.stop_and_logs()  # the first fill is stuck on a batch
    # 20 s: far beyond "at once", far below "when the indexer is done" (it never is, here)
    t = 20.0
    calls: dict[str, Callable[[Client], Any]] = {
        f"add {i}": (lambda c, i=i: c.add(f"The heron number {i} fishes at dawn.", timeout=t))
        for i in range(8)}
    calls["status"] = lambda c: c.status(timeout=t)
    calls["ping"] = lambda c: c.ping(timeout=t)
    replies = answer_all(daemon.endpoint, calls, timeout=t)
    assert not held.release.is_set()
    failed = {name: repr(r) for name, r in replies.items() if isinstance(r, Exception)}
    assert not failed, failed
    for i in range(8):
        note = replies[f"add {i}"]
        # honest: written, not searchable yet, and says so (the agent must not add it again)
        assert note["indexed"] is False and "queued for indexing" in note["indexError"], note
    indexer = replies["status"]["agents"]["main"]["indexer"]
    assert indexer["state"] == "reconciling" and indexer["alive"], indexer
    daily = (daemon.workspace / replies["add 0"]["path"]).read_text()
    assert all(daily.count(f"The heron number {i} fishes at dawn.") == 1 for i in range(8))

    held.release.set()
    seen: list[str] = []
    assert wait_for(finds(daemon, "heron fishes dawn", replies["add 0"]["path"], seen), 60), seen
    assert daemon.stop() == 0


def test_an_add_to_an_idle_daemon_is_searchable_at_once(daemon: Daemon,
                                                        held: HeldEmbeddings) -> None:
    held.release.set()
    (daemon.workspace / "MEMORY.md").write_text(f"# Memory\n\nThe {MARKER} is grey.\n")
    daemon.start()
    with daemon.client() as c:
        assert wait_for(lambda: c.status()["agents"]["main"]["indexer"]["state"] == "idle", 60)
        note = c.add("The kingfisher nests in the bank.")
        assert note["indexed"] is True and "indexError" not in note, note
        hits = c.search("kingfisher", min_score=0.0)["results"]
        assert note["path"] in {h["path"] for h in hits}, hits
    assert daemon.stop() == 0
