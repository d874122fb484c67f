"""Periodic jobs on APScheduler 3's BackgroundScheduler.

- reconcile scan every `sync.reconcile_minutes` (catches whatever the watcher missed)
- embedding-cache pruning daily and WAL checkpoint hourly
- the dreaming sweep on `dreaming.frequency` (cron) in `dreaming.timezone` (default: local)

The scheduler only *asks*: index writes go to each agent's indexer thread (the single writer),
so a job never blocks the scheduler and never races another writer. Every job has
max_instances=1 and coalesce=True: a sleeping laptop that wakes up runs a missed job once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
from typing import Any

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from openmemd.config import Settings
from openmemd.log import get_logger
from openmemd.server.openclaw_side import dreams_here

log = get_logger(__name__)

JOB_RECONCILE = "reconcile"
JOB_PRUNE = "prune-cache"
JOB_CHECKPOINT = "checkpoint"
JOB_DREAM = "dreaming"
# A sweep missed while the machine slept still runs when it wakes, up to this late.
DREAM_MISFIRE_GRACE_S = 6 * 3600


def scheduler_timezone(settings: Settings) -> tzinfo:
    if settings.dreaming.timezone:
        from zoneinfo import ZoneInfo

        return ZoneInfo(settings.dreaming.timezone)
    try:
        import tzlocal

        return tzlocal.get_localzone()
    except Exception:  # no usable local zone (minimal containers): UTC is a safe default
        from datetime import timezone

        return timezone.utc


class Jobs:
    """Callbacks the scheduler fires; each loops over the agents itself."""

    def __init__(self, reconcile: Callable[[], None], prune: Callable[[], None],
                 checkpoint: Callable[[], None], dream: Callable[[], None]) -> None:
        self.reconcile = reconcile
        self.prune = prune
        self.checkpoint = checkpoint
        self.dream = dream


class MaintenanceScheduler:
    def __init__(self, settings: Settings, jobs: Jobs) -> None:
        self._jobs = jobs
        self._tz = scheduler_timezone(settings)
        self._sched = BackgroundScheduler(timezone=self._tz, job_defaults={
            "max_instances": 1, "coalesce": True, "misfire_grace_time": 300})
        self._settings = settings

    def start(self) -> None:
        self._apply(self._settings)
        self._sched.start()
        log.info("scheduler_started", timezone=str(self._tz), jobs=self.next_runs())

    def shutdown(self) -> None:
        if self._sched.running:
            # wait=False: a running dreaming sweep must not hold up a SIGTERM; it writes its
            # Markdown atomically, so abandoning it loses nothing.
            self._sched.shutdown(wait=False)

    def reload(self, settings: Settings) -> None:
        """Re-read intervals and the dreaming cron (SIGHUP). The timezone needs a restart."""
        self._settings = settings
        self._apply(settings)
        log.info("scheduler_reloaded", jobs=self.next_runs())

    @property
    def running(self) -> bool:
        return bool(self._sched.running)

    def next_runs(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for job_id in (JOB_RECONCILE, JOB_PRUNE, JOB_CHECKPOINT, JOB_DREAM):
            job = self._sched.get_job(job_id)
            nrt = getattr(job, "next_run_time", None) if job else None
            out[job_id] = nrt.isoformat() if isinstance(nrt, datetime) else None
        return out

    def _apply(self, s: Settings) -> None:
        if s.sync.reconcile_minutes > 0:
            self._put(JOB_RECONCILE, self._jobs.reconcile,
                      IntervalTrigger(minutes=s.sync.reconcile_minutes, timezone=self._tz))
        else:
            self._drop(JOB_RECONCILE)
        # First pruning soon after start-up: a machine that never stays up 24 h still prunes.
        self._put(JOB_PRUNE, self._jobs.prune, IntervalTrigger(hours=24, timezone=self._tz),
                  next_run_time=datetime.now(self._tz) + timedelta(minutes=15))
        self._put(JOB_CHECKPOINT, self._jobs.checkpoint,
                  IntervalTrigger(hours=1, timezone=self._tz))
        if s.dreaming.enabled and any(dreams_here(s.for_agent(a), a, None)
                                      for a in s.agent_ids()):
            self._put(JOB_DREAM, self._jobs.dream,
                      CronTrigger.from_crontab(s.dreaming.frequency, timezone=self._tz),
                      misfire_grace_time=DREAM_MISFIRE_GRACE_S)
        else:
            self._drop(JOB_DREAM)

    def _put(self, job_id: str, func: Callable[[], None], trigger: Any,
             **options: Any) -> None:
        existing = self._sched.get_job(job_id)
        if existing is not None and str(existing.trigger) == str(trigger):
            return  # unchanged: keep its next run time
        self._sched.add_job(_guarded(job_id, func), trigger, id=job_id, name=job_id,
                            replace_existing=True, **options)

    def _drop(self, job_id: str) -> None:
        if self._sched.get_job(job_id) is not None:
            self._sched.remove_job(job_id)


def _guarded(job_id: str, func: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        try:
            func()
        except Exception:
            log.exception("scheduled_job_failed", job=job_id)

    return run
