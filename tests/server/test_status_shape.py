"""The shape of `status` as its users see it, pinned: the socket's reply, `openmemd status
--json` (daemon and in-process) and the MCP memory_status tool. The key sets below were
recorded from a real daemon before status became typed records (protocol/status.py), so the
records' JSON cannot drift from what scripts and models already read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from daemon_harness import DEBOUNCE_MS, Daemon, make_daemon
from helpers import wait_for
from mcp_session import call, mcp_session
from openmemd.protocol.status import AgentStatus, DaemonStatus


def key_paths(value: Any, prefix: str = "") -> list[str]:
    """Every key path of a JSON value, in order; a list of objects is read through its first
    element (`[]`)."""
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append(prefix + key)
            out += key_paths(item, f"{prefix}{key}.")
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        out += key_paths(value[0], f"{prefix}[].")
    return out


INDEX = [
    "agent", "workspace", "dbPath", "sources", "extraPaths", "provider", "provider.requested",
    "provider.id", "provider.model", "provider.dims", "provider.unavailableReason",
    "searchMode", "recovery", "files", "files.onDisk", "files.indexed"]
INDEXED = ["files.stale", "files.deletedOnDisk"]
INDEX_REST = [
    "chunks", "pendingVectors", "vector", "vector.available", "vector.mode"]
VECTORS_ON = ["vector.version"]
VECTOR_REST = ["vector.reason", "vector.dims"]
VECTOR_COUNT = ["vector.vectors"]
TAIL = [
    "fts", "fts.available", "fts.tokenizer", "cache", "cache.enabled", "cache.entries",
    "cache.maxEntries", "lastSync", "lastSync.at", "lastSync.error", "lastSync.report"]
SYNC_REPORT = [
    "lastSync.report.scanned", "lastSync.report.indexed", "lastSync.report.unchanged",
    "lastSync.report.deleted", "lastSync.report.chunks", "lastSync.report.vectorsEmbedded",
    "lastSync.report.vectorsFromCache", "lastSync.report.vectorsPending",
    "lastSync.report.reindexed", "lastSync.report.seconds", "lastSync.report.skipped",
    "lastSync.report.warnings"]
BY_SOURCE = ["bySource"]
BY_SOURCE_MEMORY = ["bySource.memory", "bySource.memory.files", "bySource.memory.chunks"]
STORE = [
    "indexExists", "reindexNeeded", "store", "store.backend", "store.location", "store.path",
    "store.driver", "store.sqliteVersion", "store.sqliteVec"]
PROBE = ["probe", "probe.ok", "probe.results", "probe.ms"]
WATCH = [
    "watch", "watch.state", "watch.backend", "watch.error", "watch.pending", "watch.events",
    "watch.lastEvent", "watch.restarts", "watch.debounceMs", "watch.overflows",
    "watch.lastOverflow", "watch.debounceOverflows", "watch.watchFailures",
    "watch.pollingSubtrees", "watcher"]
INDEXER = [
    "indexer", "indexer.state", "indexer.queueDepth", "indexer.overflows", "indexer.reconciles",
    "indexer.lastReconcile", "indexer.lastReconcile.at", "indexer.lastReconcile.seconds",
    "indexer.lastReconcile.reasons", "indexer.lastReconcile.force",
    "indexer.lastReconcile.report",
    *[p.replace("lastSync.", "indexer.lastReconcile.") for p in SYNC_REPORT],
    "indexer.lastBatch", "indexer.lastError", "indexer.lastErrorAt", "indexer.alive",
    "indexer.progress", "indexer.retry", "queueDepth", "progress"]
DREAMING = [
    "dreaming", "dreaming.enabled", "dreaming.running", "dreaming.lastSweep",
    "dreaming.nextRun"]
RECONCILE = ["reconcile", "reconcile.last", "reconcile.next"]

DAEMON_AGENT = (INDEX + INDEXED + INDEX_REST + VECTORS_ON + VECTOR_REST + VECTOR_COUNT + TAIL
                + SYNC_REPORT + BY_SOURCE + BY_SOURCE_MEMORY + STORE + WATCH + INDEXER
                + DREAMING + PROBE + RECONCILE)
DAEMON_TOP = ["running", "health", "problems", "version", "pid", "endpoint", "startedAt",
              "uptimeSeconds", "rssBytes", "cpuSeconds", "configFile", "configFiles", "notes",
              "scheduler", "scheduler.running", "scheduler.jobs", "scheduler.jobs.reconcile",
              "scheduler.jobs.prune-cache", "scheduler.jobs.checkpoint",
              "scheduler.jobs.dreaming", "server", "server.requests", "server.errors",
              "server.rejected", "server.queued", "server.workers", "server.pools",
              *[f"server.pools.{pool}{key}" for pool in ("requests", "longOps", "control")
                for key in ("", ".threads", ".busy", ".queued", ".oldestQueuedSeconds",
                            ".deaths", ".longestBusySeconds")],
              "server.problems", "agents", "agents.main",
              *[f"agents.main.{p}" for p in DAEMON_AGENT]]
# No daemon, no index file yet: what `openmemd status --json --deep` shows in process.
OFFLINE_AGENT = (INDEX + INDEX_REST + VECTOR_REST + TAIL + BY_SOURCE + STORE + PROBE)
OFFLINE_TOP = ["running", "health", "reason", "endpoint", "version", "configFile",
               "configFiles", "agents", *[f"agents.[].{p}" for p in OFFLINE_AGENT]]
MEMORY_STATUS = ["health", "problems", "mode", "daemon", "agent", "workspace", "provider",
                 "model", "providerUnavailable", "searchMode", "files", "files.indexed",
                 "files.onDisk", "files.stale", "chunks", "pendingVectors", "store",
                 "store.backend", "error"]
MEMORY_STATUS_DAEMON = [*MEMORY_STATUS[:4], "daemon.pid", "daemon.endpoint",
                        *MEMORY_STATUS[4:]]


def same_keys(got: list[str], pinned: list[str]) -> None:
    assert sorted(got) == sorted(pinned), (sorted(set(got) - set(pinned)),
                                           sorted(set(pinned) - set(got)))


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    # The real default model: a hybrid index shows its vector keys too.
    yield from make_daemon(f"[sync]\nwatch_debounce_ms = {DEBOUNCE_MS}\n")


def memory_status(d: Daemon) -> dict[str, Any]:
    async def ask() -> dict[str, Any]:
        async with mcp_session(d.workspace, d.root / "state", d.config,
                               endpoint=d.endpoint) as s:
            return await call(s, "memory_status")
    return anyio.run(ask)


def test_status_keys_are_the_ones_users_read(daemon: Daemon) -> None:
    (daemon.workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    offline = daemon.cli("status", "--json", "--deep")
    assert offline.returncode == 2, offline.stderr
    same_keys(key_paths(json.loads(offline.stdout)), OFFLINE_TOP)
    same_keys(key_paths(memory_status(daemon)), MEMORY_STATUS)

    daemon.start()

    def settled() -> bool:
        with daemon.client() as c:
            main = c.status()["agents"]["main"]
        return (main["indexer"]["lastReconcile"] is not None and main["pendingVectors"] == 0
                and main["indexer"]["state"] == "idle")
    assert wait_for(settled, 120), daemon.stop_and_logs()
    with daemon.client(timeout=60) as c:
        reply = c.status(deep=True)
    same_keys(key_paths(reply), DAEMON_TOP)
    # the records read a real reply back exactly, key order included
    again = DaemonStatus.from_json(reply).to_json()
    assert json.dumps(again) == json.dumps(reply)
    shown = daemon.cli("status", "--json", "--deep")
    assert shown.returncode == 0, shown.stderr
    same_keys(key_paths(json.loads(shown.stdout)), DAEMON_TOP)
    same_keys(key_paths(memory_status(daemon)), MEMORY_STATUS_DAEMON)
    assert daemon.stop() == 0


def test_records_read_what_an_older_daemon_left_out() -> None:
    """A reply without the keys a newer openmemd added reads with empty values, and the text
    rendering of it does not fail."""
    from openmemd.cli.report import print_status_text

    old = DaemonStatus.from_json({"running": True, "health": "healthy",
                                  "agents": {"main": {"agent": "main", "files": {}}}})
    main = old.agent("main")
    assert main is not None and main.index is not None
    assert (main.index.files.on_disk, main.index.provider.id, main.watch) == (0, "", None)
    print_status_text(old)


@pytest.mark.parametrize("shape", [
    {"agent": "w", "error": "cannot open the index: gone", "reconcile": {"last": None,
                                                                         "next": None}},
    {"agent": "w", "workspace": "/w", "indexError": "status failed: boom",
     "watch": {"state": "disabled", "pending": 0}, "watcher": "disabled",
     "dreaming": {"enabled": True, "running": False, "lastSweep": None,
                  "leftToOpenClaw": True, "note": "dreaming: left to OpenClaw",
                  "nextRun": None},
     "sessionsDir": "/s", "sessionsWatch": {"state": "not watched", "pending": 0},
     "restartNeeded": ["embedding.provider"], "probe": {"ok": False, "error": "x", "ms": 1.0}},
])
def test_an_agent_that_could_not_answer_keeps_its_shape(shape: dict[str, Any]) -> None:
    assert json.dumps(AgentStatus.from_json(shape).to_json()) == json.dumps(shape)
