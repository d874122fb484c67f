"""End to end: the real daemon in a subprocess, real sockets, real watcher, real index.

Most tests run with the embedding provider off (keyword search) to stay fast; one runs the real
default model. Every wait is a polling loop with a generous timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import zmq

from daemon_harness import DEBOUNCE_MS, Daemon, make_daemon
from helpers import wait_for


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    yield from make_daemon()


@pytest.fixture(scope="module")
def running() -> Iterator[Daemon]:
    gen = make_daemon()
    d = next(gen)
    (d.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    d.start()
    yield d
    assert d.stop() == 0
    gen.close()


def paths_for(d: Daemon, query: str) -> set[str]:
    with d.client() as c:
        reply = c.search(query, min_score=0.0, max_results=20)
    return {r["path"] for r in reply["results"]}


def searchable(d: Daemon, query: str, path: str) -> Callable[[], bool]:
    return lambda: path in paths_for(d, query)


def gone(d: Daemon, query: str, path: str) -> Callable[[], bool]:
    return lambda: path not in paths_for(d, query)


# -- the index follows the workspace ------------------------------------------------------------

def test_startup_reconcile_indexes_existing_notes(running: Daemon) -> None:
    assert wait_for(searchable(running, "pelican", "MEMORY.md"))


def test_plain_write_update_and_delete(running: Daemon) -> None:
    note = running.workspace / "memory" / "2026-03-01.md"
    note.write_text("Met Arvid about the quokka migration.\n")
    assert wait_for(searchable(running, "quokka", "memory/2026-03-01.md"))
    note.write_text("Met Arvid about the wombat migration.\n")
    assert wait_for(searchable(running, "wombat", "memory/2026-03-01.md"))
    assert wait_for(gone(running, "quokka", "memory/2026-03-01.md"))
    note.unlink()
    assert wait_for(gone(running, "wombat", "memory/2026-03-01.md"))


def test_atomic_rename_save(running: Daemon) -> None:
    target = running.workspace / "memory" / "atomic.md"
    tmp = running.workspace / "memory" / ".atomic.md.tmp"
    tmp.write_text("The axolotl tank needs cleaning.\n")
    os.replace(tmp, target)
    assert wait_for(searchable(running, "axolotl", "memory/atomic.md"))
    tmp.write_text("The narwhal tank needs cleaning.\n")
    os.replace(tmp, target)
    assert wait_for(searchable(running, "narwhal", "memory/atomic.md"))
    assert wait_for(gone(running, "axolotl", "memory/atomic.md"))


def test_vim_style_save(running: Daemon) -> None:
    note = running.workspace / "memory" / "vim.md"
    note.write_text("Original: capybara notes.\n")
    assert wait_for(searchable(running, "capybara", "memory/vim.md"))
    backup = running.workspace / "memory" / "vim.md~"
    os.rename(note, backup)
    note.write_text("Rewritten: okapi notes.\n")
    backup.unlink()
    assert wait_for(searchable(running, "okapi", "memory/vim.md"))
    assert wait_for(gone(running, "capybara", "memory/vim.md"))


def test_new_subdirectory_and_tree_moved_in(running: Daemon) -> None:
    sub = running.workspace / "memory" / "projects" / "alpha"
    sub.mkdir(parents=True)
    (sub / "plan.md").write_text("The pangolin milestone is in May.\n")
    assert wait_for(searchable(running, "pangolin", "memory/projects/alpha/plan.md"))
    outside = Path(tempfile.mkdtemp(dir="/tmp", prefix="omx"))
    try:
        (outside / "tree" / "deeper").mkdir(parents=True)
        (outside / "tree" / "deeper" / "n.md").write_text("Remember the tapir invoice.\n")
        os.rename(outside / "tree", running.workspace / "memory" / "imported")
        assert wait_for(searchable(running, "tapir", "memory/imported/deeper/n.md"))
        # and moved out again: removed (via the reconcile the watcher asks for)
        os.rename(running.workspace / "memory" / "imported", outside / "back")
        assert wait_for(gone(running, "tapir", "memory/imported/deeper/n.md"))
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def test_get_and_sync_ops(running: Daemon) -> None:
    with running.client() as c:
        assert c.ping()["agents"] == {"main": {
            "workspace": str(running.workspace), "ok": True,
            "index": str((running.root / "state" / "memory" / "main.sqlite").resolve())}}
        got = c.get("MEMORY.md", from_line=3, lines=1)
        assert got["text"].strip() == "The launch codeword is pelican."
        report = c.sync()["report"]
        assert report["scanned"] >= 1
        assert c.sync(wait=False)["queued"] is True
        with pytest.raises(Exception) as info:
            c.get("../etc/passwd")
        assert getattr(info.value, "code", "") in ("forbidden", "not_found", "bad_request")
        with pytest.raises(Exception) as unknown:
            c.search("x", agent="nobody")
        assert getattr(unknown.value, "code", "") == "not_found"


def test_searches_accumulate_recalls_and_dreaming_runs(running: Daemon) -> None:
    from datetime import datetime

    day = datetime.now().astimezone().date().isoformat()  # the daemon's local day buckets
    note = f"memory/{day}.md"
    (running.workspace / note).write_text("We adopted a grey cat named Ferrous.\n")
    assert wait_for(searchable(running, "Ferrous", note))
    store = running.workspace / "memory" / ".dreams" / "short-term-recall.json"

    def recalls() -> int:
        try:
            entries = json.loads(store.read_text())["entries"]
        except (OSError, ValueError, KeyError):
            return 0
        return sum(e["recallCount"] for e in entries.values() if e["path"] == note)

    with running.client() as c:
        for query in ("Ferrous", "grey cat named", "adopted a cat", "Ferrous the cat"):
            assert note in {r["path"] for r in c.search(query, min_score=0.0)["results"]}
        assert wait_for(lambda: recalls() == 4)  # recorded off the reply path
        c.search("Ferrous", min_score=0.0)  # the same query on the same day counts once
        time.sleep(0.5)
        assert recalls() == 4
        dry = c.dream(phase="all", dry_run=True)["result"]
        assert dry["dryRun"] is True
        assert not (running.workspace / "memory" / "dreaming").exists()
        result = c.dream(phase="all")["result"]
        assert result["light"]["staged"] >= 1
        assert (running.workspace / "memory" / "dreaming" / "light" / f"{day}.md").is_file()
        # 4 recalls by 4 distinct queries pass the default gates (>= 3 each, score >= 0.8)
        memory_md = (running.workspace / "MEMORY.md").read_text()
        marker = f"<!-- openclaw-memory-promotion:memory:{note}:1:1 -->"
        assert memory_md.count(marker) == 1 and "grey cat named Ferrous" in memory_md
        assert [p["key"] for p in result["promoted"]] == [f"memory:{note}:1:1"]
        again = c.dream(phase="all")["result"]
        assert again["promoted"] == [] and again["deep"]["promoted"] == 0
        assert (running.workspace / "MEMORY.md").read_text().count(marker) == 1
        # the watcher re-indexes what dreaming wrote, like any other edit; the promoted copy is
        # not shown beside the note it came from, so it is seen once the note is gone
        (running.workspace / note).unlink()
        assert wait_for(searchable(running, "Ferrous", "MEMORY.md"))
        status = c.status()
        assert status["agents"]["main"]["dreaming"]["lastSweep"] is not None


# -- protocol robustness -------------------------------------------------------------------------

def test_malformed_messages_get_error_replies(running: Daemon) -> None:
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 10000)
    sock.connect(running.endpoint)
    try:
        cases = [b"", b"\xff\xfe", b"not json", b"[1,2]", b'{"op":"nope"}',
                 b'{"op":"search"}', b'{"op":"search","query":"x","maxResults":"a"}',
                 b'{"op":"get","path":5}', json.dumps({"op": "ping", "pad": "x" * 1_100_000}
                                                      ).encode()]
        for body in cases:
            sock.send(body)
            reply = json.loads(sock.recv())
            assert reply["ok"] is False and reply["error"]["code"] == "bad_request", body[:30]
        sock.send_multipart([b'{"op":"ping"}', b"extra"])
        assert json.loads(sock.recv())["error"]["code"] == "bad_request"
    finally:
        sock.close()
    with running.client() as c:
        assert c.ping()["pong"] is True


def test_lone_surrogates_do_not_silence_the_daemon(running: Daemon) -> None:
    # JSON "\ud800" decodes to a lone surrogate; replies used to fail to encode and kill the
    # worker, and four such requests left nothing answering.
    bodies = [b'{"op":"ping","id":"\\ud800"}', b'{"op":"search","query":"x","id":"\\udfff"}',
              b'{"op":"search","query":"pel\\ud800ican"}', b'{"op":"get","path":"\\ud800.md"}',
              b'{"op":"status","id":"\\ud800"}']
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 10000)
    sock.connect(running.endpoint)
    try:
        for _ in range(3):
            for body in bodies:
                sock.send(body)
                reply = json.loads(sock.recv())
                assert "ok" in reply, body
        sock.send(bodies[0])
        assert json.loads(sock.recv())["id"] == "\ud800"
        sock.send(bodies[2])
        assert "'query' must be valid Unicode" in json.loads(sock.recv())["error"]["message"]
    finally:
        sock.close()
    with running.client() as c:
        assert c.ping()["pong"] is True
        # No worker died or hangs (that would keep it degraded for minutes); a sync still
        # settling on a loaded machine may make it degraded for a moment.
        assert wait_for(lambda: c.status()["health"] == "healthy", 30), c.status()["problems"]


def test_cli_and_daemon_refuse_the_same_parameters(running: Daemon) -> None:
    from openmemd.client import RemoteBadRequest

    cases = [(["--min-score", "5"], {"min_score": 5.0}, "min-score", "minScore"),
             (["--max-results", "-1"], {"max_results": -1}, "max-results", "maxResults")]
    for flags, kwargs, flag, wire in cases:
        proc = running.cli("search", "pelican", *flags)
        assert proc.returncode == 2 and proc.stdout == "", proc
        assert proc.stderr.startswith(f"openmemd: --{flag} must be between")
        with running.client() as c, pytest.raises(RemoteBadRequest) as info:
            c.search("pelican", **kwargs)
        assert info.value.message == proc.stderr.strip().replace(
            f"openmemd: --{flag}", f"'{wire}'")
    proc = running.cli("search", "")
    assert (proc.returncode, proc.stderr) == (2, "openmemd: the query must not be empty\n")


def test_sixteen_concurrent_clients(running: Daemon) -> None:
    errors: list[str] = []

    def work(n: int) -> None:
        try:
            with running.client() as c:
                for _ in range(10):
                    reply = c.search("pelican", min_score=0.0)
                    if "MEMORY.md" not in {r["path"] for r in reply["results"]}:
                        errors.append(f"client {n}: {reply}")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(f"client {n}: {exc!r}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:3]


# -- the real default model ----------------------------------------------------------------------

@pytest.fixture
def model_daemon() -> Iterator[Daemon]:
    yield from make_daemon(f"[sync]\nwatch_debounce_ms = {DEBOUNCE_MS}\n")


def test_real_model_hybrid_search(model_daemon: Daemon) -> None:
    d = model_daemon
    (d.workspace / "MEMORY.md").write_text(
        "# Memory\n\nThe user's cat is called Miso and sleeps on the radiator.\n")
    d.start()
    with d.client(timeout=120) as c:
        report = c.sync()["report"]
        assert report["scanned"] == 1
        status = c.status()["agents"]["main"]
        store = status["store"]
        assert (store["backend"], store["location"]) == ("sqlite", status["dbPath"])
        assert store["sqliteVersion"] and store["sqliteVec"] == status["vector"]["version"]
        if status["provider"]["id"] == "none":
            pytest.skip(f"no local model here: {status['provider']['unavailableReason']}")
        reply = c.search("what is the name of my cat", min_score=0.0)
        assert reply["mode"] == "hybrid"
        assert reply["results"] and reply["results"][0]["path"] == "MEMORY.md"
    (d.workspace / "memory" / "2026-04-02.md").write_text("Booked the dentist for Tuesday.\n")

    def indexed() -> bool:
        with d.client(timeout=60) as c:
            hits = c.search("dentist Tuesday", min_score=0.0)["results"]
        return any(h["path"] == "memory/2026-04-02.md" and "dentist" in h["snippet"]
                   for h in hits)
    assert wait_for(indexed, 60)
    assert d.stop() == 0
