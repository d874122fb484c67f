"""Health rules for `status`: what makes the daemon "degraded", stated as readable problems.

Users of peer tools suffer most from a stale index behind a status that says all is fine, so
every rule here names what is wrong and the figures that show it.
"""

from __future__ import annotations

import os
import resource
import sys
from typing import Any

HEALTHY = "healthy"
DEGRADED = "degraded"


def agent_problems(agent_id: str, st: dict[str, Any], *, watch_enabled: bool) -> list[str]:
    """Problems of one agent, from its merged status (index + watcher + indexer + probe)."""
    p: list[str] = []
    prefix = f"{agent_id}: "
    if st.get("error"):
        return [prefix + str(st["error"])]
    watcher = st.get("watch") or {}
    if watch_enabled and watcher.get("state") not in ("running", "running (polling)"):
        detail = f" ({watcher['error']})" if watcher.get("error") else ""
        polled = "polling" in str(watcher.get("state"))  # slower, but nothing is missed
        p.append(f"{prefix}watcher {watcher.get('state', 'missing')}{detail}; changes are "
                 + ("seen by polling" if polled else "picked up by the periodic reconcile only"))
    indexer = st.get("indexer") or {}
    if indexer and not indexer.get("alive", True):
        p.append(f"{prefix}indexer thread is not running")
    if indexer.get("lastError"):
        p.append(f"{prefix}{indexer['lastError']}")
    last_sync = st.get("lastSync") or {}
    if last_sync.get("error") and last_sync.get("error") != indexer.get("lastError"):
        p.append(f"{prefix}last sync failed: {last_sync['error']}")
    if st.get("indexError"):
        p.append(f"{prefix}{st['indexError']}")
    provider = st.get("provider") or {}
    if provider.get("requested") not in (None, "none") and provider.get("unavailableReason"):
        p.append(f"{prefix}embedding provider unavailable ({provider['unavailableReason']}); "
                 "searching keywords only")
    behind = index_behind(st)
    if behind:
        p.append(f"{prefix}{behind} file(s) on disk differ from the index after a sync")
    probe = st.get("probe")
    if probe and not probe.get("ok"):
        p.append(f"{prefix}probe search failed: {probe.get('error')}")
    return p


def index_behind(st: dict[str, Any]) -> int:
    """Files that differ between disk and index while nothing is queued, after a reconcile.

    Files the last reconcile skipped on purpose (too large, unreadable) do not count.
    """
    indexer = st.get("indexer") or {}
    watcher = st.get("watch") or {}
    last = indexer.get("lastReconcile")
    if not last or indexer.get("state") != "idle" or indexer.get("queueDepth"):
        return 0
    if watcher.get("pending"):
        return 0
    files = st.get("files") or {}
    skipped = len(((last.get("report") or {}).get("skipped")) or [])
    return max(0, int(files.get("stale", 0)) + int(files.get("deletedOnDisk", 0)) - skipped)


def overall(problems: list[str]) -> str:
    return DEGRADED if problems else HEALTHY


def rss_bytes() -> int | None:
    """Current resident set size (Linux: /proc; elsewhere the peak from getrusage)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system
