"""Health rules for `status`: what makes the daemon "degraded", stated as readable problems.

Users of peer tools suffer most from a stale index behind a status that says all is fine, so
every rule here names what is wrong and the figures that show it.
"""

from __future__ import annotations

import os
import resource
import sys

from openmemd.protocol.status import RUNNING, AgentStatus

HEALTHY = "healthy"
DEGRADED = "degraded"


def agent_problems(st: AgentStatus, *, watch_enabled: bool) -> list[str]:
    """Problems of one agent, from its merged status (index + watcher + indexer + probe)."""
    p: list[str] = []
    prefix = f"{st.agent}: "
    if st.error:
        return [prefix + st.error]
    watch, indexer, index = st.watch, st.indexer, st.index
    state = watch.state if watch is not None else None
    if watch_enabled and state not in (RUNNING, "running (polling)"):
        detail = f" ({watch.error})" if watch is not None and watch.error else ""
        polled = "polling" in str(state)  # slower, but nothing is missed
        p.append(f"{prefix}watcher {state or 'missing'}{detail}; changes are "
                 + ("seen by polling" if polled else "picked up by the periodic reconcile only"))
    indexer_error = indexer.last_error if indexer is not None else None
    if indexer is not None and not indexer.alive:
        p.append(f"{prefix}indexer thread is not running")
    if indexer_error:
        p.append(f"{prefix}{indexer_error}")
    sync_error = index.last_sync.error if index is not None else None
    if sync_error and sync_error != indexer_error:
        p.append(f"{prefix}last sync failed: {sync_error}")
    if st.index_error:
        p.append(f"{prefix}{st.index_error}")
    provider = index.provider if index is not None else None
    if provider is not None and provider.requested not in ("", "none") \
            and provider.unavailable_reason:
        p.append(f"{prefix}embedding provider unavailable ({provider.unavailable_reason}); "
                 "searching keywords only")
    behind = index_behind(st)
    if behind:
        p.append(f"{prefix}{behind} file(s) on disk differ from the index after a sync")
    if st.probe is not None and not st.probe.ok:
        p.append(f"{prefix}probe search failed: {st.probe.error}")
    return p


def index_behind(st: AgentStatus) -> int:
    """Files that differ between disk and index while nothing is queued, after a reconcile.

    Files the last reconcile skipped on purpose (too large, unreadable) do not count.
    """
    indexer = st.indexer
    last = indexer.last_reconcile if indexer is not None else None
    if indexer is None or last is None or indexer.state != "idle" or indexer.queue_depth:
        return 0
    if st.watch is not None and st.watch.pending:
        return 0
    if st.index is None:
        return 0
    files = st.index.files
    return max(0, (files.stale or 0) + (files.deleted_on_disk or 0) - last.skipped)


def overall(problems: list[str]) -> str:
    return DEGRADED if problems else HEALTHY


def rss_bytes() -> int:
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
