"""Health rules: what makes status "degraded", and the dispatcher's status shape."""

from __future__ import annotations

from typing import Any

from openmemd.api import health
from openmemd.protocol.requests import PingRequest, StatusRequest
from openmemd.protocol.status import AgentStatus, SchedulerStatus
from openmemd.server.agent import AgentRuntime
from openmemd.server.handlers import Dispatcher


def healthy_json(**over: Any) -> dict[str, Any]:
    st: dict[str, Any] = {
        "agent": "a",
        "provider": {"requested": "auto", "unavailableReason": None},
        "files": {"onDisk": 3, "indexed": 3, "stale": 0, "deletedOnDisk": 0},
        "lastSync": {"error": None},
        "watch": {"state": "running", "pending": 0},
        "indexer": {"alive": True, "state": "idle", "queueDepth": 0, "lastError": None,
                    "lastReconcile": {"report": {"skipped": []}}},
    }
    st.update(over)
    return st


def healthy_status(**over: Any) -> AgentStatus:
    """An agent's status as the daemon's JSON says it (tolerant of the keys left out)."""
    return AgentStatus.from_json(healthy_json(**over))


def test_healthy() -> None:
    assert health.agent_problems(healthy_status(agent="main"), watch_enabled=True) == []
    assert health.overall([]) == "healthy"


def test_each_rule() -> None:
    cases = {
        "watcher degraded (polling)": healthy_status(
            watch={"state": "degraded (polling)", "pending": 0}),
        "indexer thread": healthy_status(indexer={**healthy_json()["indexer"], "alive": False}),
        "reconcile failed: disk": healthy_status(
            indexer={**healthy_json()["indexer"], "lastError": "reconcile failed: disk"}),
        "last sync failed": healthy_status(lastSync={"error": "OperationalError: locked"}),
        "embedding provider unavailable": healthy_status(
            provider={"requested": "auto", "unavailableReason": "model missing"}),
        "2 file(s) on disk differ": healthy_status(
            files={"onDisk": 4, "indexed": 3, "stale": 1, "deletedOnDisk": 1}),
        "probe search failed": healthy_status(probe={"ok": False, "error": "boom"}),
        "cannot open": AgentStatus("a", error="cannot open the index: nope"),
    }
    for fragment, st in cases.items():
        problems = health.agent_problems(st, watch_enabled=True)
        assert problems and any(fragment in p for p in problems), (fragment, problems)
        assert all(p.startswith("a: ") for p in problems)
        assert health.overall(problems) == "degraded"


def test_not_behind_while_work_is_pending() -> None:
    busy = healthy_status(files={"stale": 2, "deletedOnDisk": 0},
                          indexer={**healthy_json()["indexer"], "queueDepth": 2})
    assert health.index_behind(busy) == 0
    debouncing = healthy_status(files={"stale": 1, "deletedOnDisk": 0},
                                watch={"state": "running", "pending": 1})
    assert health.index_behind(debouncing) == 0
    skipped = healthy_status(files={"stale": 1, "deletedOnDisk": 0}, indexer={
        **healthy_json()["indexer"],
        "lastReconcile": {"report": {"skipped": [{"path": "big.md"}]}}})
    assert health.index_behind(skipped) == 0
    assert health.agent_problems(healthy_status(provider={
        "requested": "none", "unavailableReason": "off"}), watch_enabled=True) == []
    assert health.agent_problems(healthy_status(watch={"state": "disabled"}),
                                 watch_enabled=False) == []


def test_rss() -> None:
    rss = health.rss_bytes()
    assert rss is not None and rss > 1_000_000


def test_dispatcher_status_with_a_broken_agent() -> None:
    from openmemd.config import Settings

    broken = AgentRuntime("broken", Settings(), opener=lambda s, a: (_ for _ in ()).throw(
        __import__("openmemd.errors").errors.WorkspaceError("workspace /x does not exist")))
    broken.open()
    d = Dispatcher({"broken": broken}, endpoint="ipc:///tmp/x.sock", watch_enabled=lambda: True,
                   scheduler_info=lambda: SchedulerStatus(True, {"dreaming": "later"}))
    st = d(StatusRequest()).to_json()
    assert st["health"] == "degraded" and st["running"] is True
    assert st["problems"] == ["broken: cannot open the index: workspace /x does not exist"]
    assert set(st) >= {"version", "pid", "uptimeSeconds", "rssBytes", "endpoint", "agents",
                       "scheduler"}
    assert d(PingRequest()).to_json()["pong"] is True
