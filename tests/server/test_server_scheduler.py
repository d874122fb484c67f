"""The maintenance scheduler: jobs, next run times, reload."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from openmemd.config import DreamingSettings, Settings, SyncSettings
from openmemd.server.scheduler import Jobs, MaintenanceScheduler


def _jobs() -> Jobs:
    return Jobs(reconcile=lambda: None, prune=lambda: None, checkpoint=lambda: None,
                dream=lambda: None)


def test_next_runs_and_timezone() -> None:
    s = Settings(dreaming=DreamingSettings(frequency="30 4 * * *", timezone="Europe/Paris"))
    sched = MaintenanceScheduler(s, _jobs())
    sched.start()
    try:
        runs = sched.next_runs()
        assert set(runs) == {"reconcile", "prune-cache", "checkpoint", "dreaming"}
        dream = datetime.fromisoformat(runs["dreaming"] or "")
        assert (dream.hour, dream.minute) == (4, 30)
        assert dream.utcoffset() is not None
        assert sched.running
    finally:
        sched.shutdown()
    assert not sched.running


def test_reload_changes_and_drops_jobs() -> None:
    s = Settings()
    sched = MaintenanceScheduler(s, _jobs())
    sched.start()
    try:
        before = sched.next_runs()
        s2 = dataclasses.replace(s, sync=SyncSettings(reconcile_minutes=0),
                                 dreaming=DreamingSettings(enabled=False))
        sched.reload(s2)
        after = sched.next_runs()
        assert after["reconcile"] is None and after["dreaming"] is None
        assert after["checkpoint"] == before["checkpoint"]  # unchanged jobs keep their time
    finally:
        sched.shutdown()
