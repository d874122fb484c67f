"""The Memory view's ops through the real daemon: entries with provenance after a real
promotion, a demotion that changes MEMORY.md on disk and the archive, its undo byte for byte,
a refused demotion; over the socket and from the command line."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from daemon_harness import make_daemon
from openmemd.client import RemoteNotFound
from openmemd.config import DreamingSettings
from openmemd.dreaming import RecallHit, record_recalls, run_sweep
from openmemd.protocol.replies import DemoteReply, MemoryReply, expect
from openmemd.protocol.requests import DemoteRequest, MemoryRequest, UndoRequest

pytestmark = pytest.mark.slow

T0 = datetime(2026, 4, 6, 10, 0, tzinfo=timezone.utc)
NOTE = "memory/2026-04-06.md"
LINE = "- The gateway router needs the VLAN 42 tag before the failover test."


def _promote(ws: Path) -> None:
    """Recalls over five days by five queries, then a real sweep that promotes the line."""
    (ws / NOTE).write_text(f"# 2026-04-06\n\n## Infra\n\n{LINE}\n", encoding="utf-8")
    schedule = [(0, "q1"), (0, "q2"), (1, "q1"), (1, "q3"), (2, "q2"), (2, "q4"), (3, "q3"),
                (3, "q5"), (4, "q4"), (4, "q1")]
    for day, query in schedule:
        record_recalls(ws, query, [RecallHit(NOTE, 5, 5, 0.72, LINE)],
                       now=T0 + timedelta(days=day, hours=1), timezone="UTC")
    sweep = run_sweep(ws, DreamingSettings(timezone="UTC"), now=T0 + timedelta(days=4, hours=5))
    assert len(sweep.promoted) == 1


def test_memory_demote_and_undo_through_the_daemon() -> None:
    for d in make_daemon():
        _promote(d.workspace)
        memory = d.workspace / "MEMORY.md"
        before = memory.read_bytes()
        d.start()
        with d.client() as c:
            view = expect(c.send(MemoryRequest()), MemoryReply)
            (entry,) = [e for e in view.entries if e.kind == "promoted"]
            assert entry.source == f"{NOTE}#L5" and sorted(entry.queries) == [
                "q1", "q2", "q3", "q4", "q5"] and entry.promoted_at
            with pytest.raises(RemoteNotFound, match="no promoted entry"):
                c.send(DemoteRequest("nope"))
            assert entry.key is not None
            moved = expect(c.send(DemoteRequest(entry.key, digest=entry.digest)), DemoteReply)
            assert "VLAN 42" not in memory.read_text(encoding="utf-8")
            assert "VLAN 42" in (d.workspace / moved.archive).read_text(encoding="utf-8")
            assert expect(c.send(UndoRequest(entry.key)), DemoteReply).exact
            assert memory.read_bytes() == before
        listed = d.cli("memory", "--json")
        assert listed.returncode == 0, listed.stderr
        assert entry.key in {e.get("key") for e in json.loads(listed.stdout)["entries"]}
        demoted = d.cli("memory", "demote", entry.key)
        assert demoted.returncode == 0 and "undo: openmemd memory undo" in demoted.stdout
        refused = d.cli("memory", "demote", entry.key)
        assert refused.returncode != 0
        assert refused.stderr.strip().count("\n") == 0 and "no promoted entry" in refused.stderr
        undone = d.cli("memory", "undo", entry.key)
        assert undone.returncode == 0, undone.stderr
        assert memory.read_bytes() == before
        with d.client() as c:  # still serving
            assert expect(c.send(MemoryRequest()), MemoryReply).exists
