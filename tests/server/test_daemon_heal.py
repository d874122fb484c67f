"""The running daemon heals a damaged index, a full disk and a provider outage by itself.

Each test runs the real daemon in a subprocess on a tiny workspace, damages what it depends on
while it runs, and waits (generous timeouts) until searches find the notes again, without a
restart. Replies are never `internal` on the way.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from daemon_harness import Daemon, daemon_problems, finds, make_daemon
from helpers import fill_filesystem, mount_tmpfs, wait_for
from openmemd.client import RemoteUnavailable
from openmemd.store.sqlite import db

NOTE = "The launch codeword is pelican.\n"


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    yield from make_daemon()


def index_path(d: Daemon) -> Path:
    return d.root / "state" / "memory" / "main.sqlite"


def agent_status(d: Daemon) -> dict:
    with d.client() as c:
        return c.status()["agents"]["main"]


def start_with_notes(d: Daemon) -> None:
    (d.workspace / "MEMORY.md").write_text(NOTE)
    for i in range(20):
        (d.workspace / "memory" / f"day-{i}.md").write_text(f"Day {i}: notes about item{i}.\n" * 30)
    d.start()
    assert wait_for(finds(d, "pelican", "MEMORY.md", []), 60), d.stop_and_logs()
    assert wait_for(lambda: settled(agent_status(d)), 60), agent_status(d)
    # As after the daemon's periodic checkpoint: the rows are in the main file, not the WAL.
    # The daemon may still be reading or writing (upkeep, a status count) for a moment on a
    # busy machine, so the checkpoint is tried until it completes (busy = 0).
    conn, _ = db.connect(index_path(d))
    try:
        assert wait_for(
            lambda: conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0, 30)
    finally:
        conn.close()


def settled(status: dict) -> bool:
    return bool(status["files"]["indexed"] == 21 and status["pendingVectors"] == 0)


def delete(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            os.unlink(f"{path}{suffix}")


def truncate(path: Path) -> None:
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 2)


def overwrite_middle(path: Path) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.seek(size // 3)
        fh.write(os.urandom(size // 3))


@pytest.mark.parametrize("damage", [delete, truncate, overwrite_middle],
                         ids=["deleted", "truncated", "middle-third-junk"])
def test_damaged_index_heals_while_the_daemon_runs(daemon: Daemon, damage) -> None:
    start_with_notes(daemon)
    damage(index_path(daemon))
    seen: list[str] = []
    # A new note after the damage is found too: the index really was rebuilt and written.
    (daemon.workspace / "memory" / "after.md").write_text("The walrus arrived after the damage.\n")
    assert wait_for(finds(daemon, "walrus", "memory/after.md", seen), 60), \
        daemon.stop_and_logs()
    assert wait_for(finds(daemon, "pelican", "MEMORY.md", seen), 30)
    assert wait_for(finds(daemon, "item7", "memory/day-7.md", seen), 30)
    rec = agent_status(daemon)["recovery"]
    assert rec is not None and rec["reason"], rec
    assert all("internal" not in s for s in seen)
    assert index_path(daemon).exists()


def test_leftover_temp_copies_are_removed_at_start(daemon: Daemon) -> None:
    state = daemon.root / "state" / "memory"
    state.mkdir(parents=True)
    leftovers = [state / f"main.sqlite.tmp-deadbeef0000{s}" for s in ("", "-wal", "-shm")]
    for p in leftovers:
        p.write_bytes(b"x" * 1000)
    (daemon.workspace / "MEMORY.md").write_text(NOTE)
    daemon.start()
    assert wait_for(finds(daemon, "pelican", "MEMORY.md", []), 60)
    assert not [p for p in leftovers if p.exists()]


# -- a full disk, for real: a tiny tmpfs holds the state directory ---------------------------

# Larger than the WAL a first sync leaves: its upkeep checkpoints the WAL, and SQLite then
# writes into the space the file already has.
NARWHALS = "".join(f"The narwhal note {i} was written while the disk was full.\n"
                   for i in range(3000))


@contextmanager
def state_on_a_tiny_disk(daemon: Daemon, size: str = "4m") -> Iterator[Path]:
    """The daemon's state directory on a tmpfs of `size`; skips where none can be mounted."""
    state = daemon.root / "state"
    state.mkdir()
    why = mount_tmpfs(state, size)
    if why:
        pytest.skip(why)
    try:
        yield state
    finally:
        daemon.stop_and_logs()
        subprocess.run(["umount", "-l", str(state)], capture_output=True)

def test_full_disk_answers_unavailable_and_converges_when_space_returns(daemon: Daemon) -> None:
    with state_on_a_tiny_disk(daemon) as state:
        (daemon.workspace / "MEMORY.md").write_text(NOTE)
        daemon.start()
        assert wait_for(finds(daemon, "pelican", "MEMORY.md", []), 60)
        filler = state / "filler"
        fill_filesystem(filler)
        (daemon.workspace / "memory" / "full.md").write_text(NARWHALS)
        assert wait_for(lambda: any("disk full" in p for p in daemon_problems(daemon)), 30), \
            daemon_problems(daemon)
        with pytest.raises(RemoteUnavailable, match="disk full"), daemon.client() as c:
            c.sync(wait=True)
        filler.unlink()  # space returns
        assert wait_for(finds(daemon, "narwhal", "memory/full.md", []), 30)
        assert wait_for(lambda: not daemon_problems(daemon), 30), daemon_problems(daemon)
        cli = daemon.cli("search", "narwhal")
        assert cli.returncode == 0 and "Traceback" not in cli.stderr


def test_a_full_disk_never_passes_for_a_damaged_index(daemon: Daemon) -> None:
    # No daemon runs, the disk is full to the last block, a note waits to be indexed. A new
    # process's first read of the index creates its `-shm` file, which SQLite reports on a
    # full filesystem as a plain "disk I/O error"; read as damage, that moved the sound index
    # aside (to be rebuilt, every chunk embedded again). It is a full disk: said so, in one
    # line, and the index stays where it is.
    with state_on_a_tiny_disk(daemon) as state:
        (daemon.workspace / "MEMORY.md").write_text(NOTE)
        assert daemon.cli("index").returncode == 0
        inode = index_path(daemon).stat().st_ino
        filler = state / "filler"
        fill_filesystem(filler)
        (daemon.workspace / "memory" / "full.md").write_text(NARWHALS)
        for args in (("search", "pelican"), ("index",)):
            done = daemon.cli(*args)
            assert done.returncode != 0 and "Traceback" not in done.stderr, done
            assert "disk full" in done.stderr, done.stderr
        assert index_path(daemon).stat().st_ino == inode
        assert not list(index_path(daemon).parent.glob("*.corrupt-*"))
        status = daemon.cli("status").stdout
        assert "Index: index unreadable: disk full writing" in status, status
        assert "Indexed:" not in status  # no "0 files" read as an empty index
        filler.unlink()  # space returns
        found = daemon.cli("search", "narwhal")
        assert found.returncode == 0 and "memory/full.md" in found.stdout, found
        assert daemon.cli("search", "pelican").stdout.count("MEMORY.md") == 1
        assert index_path(daemon).stat().st_ino == inode  # caught up in place, not rebuilt


def test_cli_on_a_full_disk_prints_one_line(daemon: Daemon) -> None:
    with state_on_a_tiny_disk(daemon, "1m"):
        (daemon.workspace / "MEMORY.md").write_text(  # needs more than 1 MB of index
            "".join(f"line {i} about topic {i * 7}\n" for i in range(40_000)))
        done = daemon.cli("index")
        assert done.returncode == 1, done
        assert "Traceback" not in done.stderr
        assert done.stderr.startswith("openmemd: disk full writing "), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


# -- the embedding provider is down, then comes back --------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def ollama_daemon() -> Iterator[tuple[Daemon, int]]:
    port = free_port()
    config = (f'[embedding]\nprovider = "openai"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
              'model = "nomic-embed-text"\nmax_retries = 0\ntimeout_seconds = 5\n'
              '[sync]\nwatch_debounce_ms = 100\n')
    gen = make_daemon(config)
    d = next(gen)
    yield d, port
    gen.close()


def test_provider_outage_degrades_to_keywords_and_vectors_fill_in_later(ollama_daemon) -> None:
    from openai_fake import EmbeddingServer

    d, port = ollama_daemon
    (d.workspace / "MEMORY.md").write_text(NOTE)
    (d.workspace / "memory" / "a.md").write_text("We adopted a tortoise named Sheldon.\n")
    done = d.cli("index")  # in process, nothing listening
    assert done.returncode == 0, done
    assert "Traceback" not in done.stderr and "embedding provider unavailable" in done.stderr
    done = d.cli("search", "pelican")
    assert done.returncode == 0 and "MEMORY.md" in done.stdout, done
    assert "keyword search only" in done.stderr and "Traceback" not in done.stderr
    d.start()
    with d.client() as c:
        reply = c.search("tortoise", min_score=0.0)
    assert [r["path"] for r in reply["results"]] == ["memory/a.md"]
    assert reply["mode"] == "fts-only" and "embedding provider unavailable" in reply["degraded"]
    assert wait_for(lambda: any("embedding provider unavailable" in p
                                for p in daemon_problems(d)), 30)
    st = agent_status(d)
    assert st["pendingVectors"] > 0 and st["searchMode"] == "fts-only"
    server = EmbeddingServer(port=port)  # the provider comes back
    try:
        assert wait_for(lambda: agent_status(d)["pendingVectors"] == 0, 60), agent_status(d)
        assert wait_for(lambda: not daemon_problems(d), 30), daemon_problems(d)
        with d.client() as c:
            reply = c.search("tortoise", min_score=0.0)
        assert reply["mode"] == "hybrid" and "degraded" not in reply
        assert reply["results"][0]["path"] == "memory/a.md"
    finally:
        d.stop()
        server.close()


# -- the real model: the embeddings survive the damage ------------------------------------------

def test_real_model_embeddings_are_salvaged_from_a_deleted_index() -> None:
    gen = make_daemon("[sync]\nwatch_debounce_ms = 100\n")
    d = next(gen)
    try:
        (d.workspace / "MEMORY.md").write_text("The user's cat is called Miso.\n")
        for i in range(5):
            (d.workspace / "memory" / f"n{i}.md").write_text(f"Meeting {i} was about budgets.\n")
        d.start()
        with d.client(timeout=120) as c:
            c.sync()
            st = c.status()["agents"]["main"]
        if st["provider"]["id"] == "none":
            pytest.skip(f"no local model here: {st['provider']['unavailableReason']}")
        assert wait_for(lambda: agent_status(d)["pendingVectors"] == 0, 120)
        embedded = agent_status(d)["cache"]["entries"]
        delete(index_path(d))
        seen: list[str] = []
        assert wait_for(finds(d, "cat name", "MEMORY.md", seen), 60), d.stop_and_logs()
        # the search needs no heal first (it reads what is open); status sees the file gone
        # and the writer heals it in the background
        assert wait_for(lambda: agent_status(d)["recovery"] is not None
                        and agent_status(d)["pendingVectors"] == 0, 60), agent_status(d)
        st = agent_status(d)
        assert st["recovery"]["salvagedEmbeddings"] == embedded > 0
        assert st["cache"]["entries"] == embedded
        with d.client(timeout=60) as c:
            assert c.search("what is my cat called", min_score=0.0)["mode"] == "hybrid"
        assert d.stop() == 0
    finally:
        gen.close()


def test_deleted_index_is_rebuilt_even_when_nothing_searches(daemon: Daemon) -> None:
    start_with_notes(daemon)
    delete(index_path(daemon))
    # Only status is asked (it never rebuilds by itself): the daemon's 5 s check notices.
    assert wait_for(lambda: (agent_status(daemon).get("recovery") or {}).get("reason")
                    == "index file deleted", 60), daemon.stop_and_logs()
    assert wait_for(index_path(daemon).exists, 30)
    assert wait_for(finds(daemon, "pelican", "MEMORY.md", []), 30)


def test_unreachable_provider_never_rebuilds_or_drops_existing_vectors(ollama_daemon) -> None:
    from openai_fake import EmbeddingServer

    d, port = ollama_daemon
    (d.workspace / "MEMORY.md").write_text(NOTE)
    server = EmbeddingServer(port=port)
    try:
        done = d.cli("index")
        assert done.returncode == 0 and "1 embedded" in done.stdout, done
    finally:
        server.close()
    # A new process (dims not learnt yet) with the provider down: keyword update only.
    (d.workspace / "memory" / "b.md").write_text("The heron nests by the lake.\n")
    done = d.cli("index")
    assert done.returncode == 0 and "full rebuild" not in done.stdout, done
    assert "embedding provider unavailable" in done.stderr and "Traceback" not in done.stderr
    conn, _ = db.connect(index_path(d), readonly=True)
    try:
        vectors = dict(conn.execute("SELECT path, embedding != '[]' FROM chunks").fetchall())
    finally:
        conn.close()
    assert vectors == {"MEMORY.md": 1, "memory/b.md": 0}
