"""One dreaming sweep over a workspace: light -> REM -> deep, then reports and the diary.

The sweep works on an in-memory copy of the recall store, phase signals and ingestion
checkpoint, and writes only at the end (a dry run simply skips that step, so it writes nothing
at all: no lock file, no directories). Write order matters for crash safety: MEMORY.md first
(after a backup), then the store with `promotedAt` -- if we die in between, the next sweep
finds the markers in MEMORY.md and reconciles instead of promoting twice.

All targets are checked before anything is written: a symlinked DREAMS.md, MEMORY.md or report
directory stops the sweep with a clear error and no file changed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, NamedTuple

from openmemd.config import PHASES, ContextSettings, DreamingSettings
from openmemd.errors import BadRequestError, WorkspaceError

from . import deep, diary, light, rem
from .agent_corpus import SESSIONS_QUERY, AgentMessages, place
from .clock import as_utc, day_bucket, iso_z, lookback_cutoff, resolve_timezone
from .events import append_events, dream_completed, promotion_applied, recall_recorded
from .ingest import collect_daily
from .layout import BACKUP_DIR, DREAMS_DIR, MEMORY_FILE, report_path
from .leftovers import remove_leftovers
from .lockfile import store_lock
from .markdown_io import atomic_write_text, workspace_target
from .memory_archive import promoted_blocks, write_archive
from .memory_write import apply_to_memory
from .recall import apply_recalls, eligible_hits
from .recall_hit import RecallHit
from .recall_store import RecallStore, load_store, save_store
from .state import (
    FileFingerprint,
    PhaseSignals,
    load_daily_ingestion,
    load_phase_signals,
    load_sweep_state,
    save_daily_ingestion,
    save_phase_signals,
    save_sweep_state,
)
from .sweep_report import DeepSummary, LightSummary, RemSummary, SweepResult

log = logging.getLogger("openmemd.dreaming")

_TITLES = {"light": "# Light Sleep", "rem": "# REM Sleep", "deep": "# Deep Sleep"}


def run_sweep(workspace: Path, settings: DreamingSettings, *,
              phases: Sequence[str] = PHASES, dry_run: bool = False,
              now: datetime | None = None,
              memory_max_chars: int = ContextSettings().bootstrap_max_chars,
              sessions: AgentMessages | None = None) -> SweepResult:
    """Run the requested phases (in light, REM, deep order) and report what happened.

    `phases` may also be a string: "all", "deep" or "light,rem". `settings.enabled` is the
    scheduler's business (an explicit call always runs); phases disabled in `settings` are
    skipped with a message. `dry_run` computes everything and writes nothing.
    `memory_max_chars` is MEMORY.md's startup budget (`context.bootstrap_max_chars`).
    `sessions(cutoff)`: other agents' session messages since `cutoff`, for the light and REM
    phases to ingest (agent_corpus.py). Raises
    WorkspaceError for a
    missing workspace, UnsafePathError (forbidden) for a symlinked target, LockTimeoutError
    (unavailable) when OpenClaw holds the store lock, StoreVersionError for a store of an
    unknown version.
    """
    ws = Path(workspace).expanduser()
    if not ws.is_dir():
        raise WorkspaceError(f"workspace {ws} does not exist or is not a directory")
    ws = ws.resolve()
    if isinstance(phases, str):  # "deep", "light,rem" or "all", as a CLI flag gives it
        phases = PHASES if phases.strip() == "all" else [p.strip() for p in phases.split(",")]
    unknown = [p for p in phases if p not in PHASES]
    if unknown:
        raise BadRequestError(f"unknown dreaming phase(s) {', '.join(map(repr, unknown))}; "
                              f"use {', '.join(PHASES)}")
    moment = as_utc(now)
    tz = resolve_timezone(settings.timezone)
    day = day_bucket(moment, tz)
    now_iso = iso_z(moment)
    run = _enabled(phases, settings)
    messages = [f"{phase} phase is disabled in the configuration"
                for phase in PHASES if phase in phases and phase not in run]

    # Refuse unsafe targets before touching anything.
    diary_path = diary.check_writable(ws)
    workspace_target(ws, DREAMS_DIR)
    for phase in run:
        workspace_target(ws, report_path(phase, day))
    if "deep" in run:
        workspace_target(ws, MEMORY_FILE)
        workspace_target(ws, BACKUP_DIR)

    with store_lock(ws, file_lock=not dry_run):
        if not dry_run:
            remove_leftovers(ws)  # temp files of killed runs (ours only)
        loaded = load_store(ws, moment, recover=not dry_run)
        messages.extend(loaded.messages)
        work = _Work(ws, moment, day, loaded.store, load_phase_signals(ws, now_iso),
                     load_daily_ingestion(ws), sessions=sessions, write=not dry_run)
        light_summary, rem_summary = _before_deep(work, settings, run)
        deep_summary, plan = DeepSummary(), None
        if "deep" in run:
            deep_summary, plan = _deep(work, settings, loaded.moved_aside, memory_max_chars)
            messages.extend(plan.messages)
        work.signals = work.signals.pruned(work.store.entries)
        work.store.updated_at = now_iso
        if dry_run:
            messages.append("dry run: nothing was written")
        result = SweepResult(
            workspace=str(ws), day=day, timezone=settings.timezone or _zone_name(tz),
            started_at=now_iso, dry_run=dry_run, phases=tuple(run), light=light_summary,
            rem=rem_summary, deep=deep_summary,
            report_paths=tuple(report_path(p, day) for p in run),
            diary_path=diary_path.name, messages=tuple(messages))
        if not dry_run:
            result = _commit(work, result, plan, settings, tz,
                             diary.compose_text(light_summary, rem_summary, deep_summary,
                                                messages))
    log.info("dreaming sweep of %s: %d promoted, %d staged%s", ws, len(result.promoted),
             result.light.staged, " (dry run)" if dry_run else "")
    return result


def _enabled(phases: Sequence[str], settings: DreamingSettings) -> list[str]:
    """The asked phases the settings leave on, in sweep order."""
    return [p for p in PHASES if p in phases and getattr(settings, p).enabled]


def _before_deep(work: _Work, settings: DreamingSettings,
                 run: Sequence[str]) -> tuple[LightSummary, RemSummary]:
    """The light and REM phases of `run` on the working set: what the deep phase scores."""
    light_summary = _light(work, settings) if "light" in run else LightSummary()
    rem_summary = _rem(work, settings) if "rem" in run else RemSummary()
    return light_summary, rem_summary


class DeepInputs(NamedTuple):
    """What the deep phase of a sweep now would score (`deep_inputs`)."""

    store: RecallStore
    signals: PhaseSignals
    saved: frozenset[str]  # the keys the saved store has (the rest this sweep would add)


def deep_inputs(workspace: Path, settings: DreamingSettings, now: datetime,
                phases: Sequence[str] = PHASES) -> DeepInputs:
    """The recall store and phase signals a sweep of `phases` now hands its deep phase: the
    saved ones after its light and REM phases, in memory, nothing written. `dream explain`
    scores on these, so it gives an entry the score `dream` gives it."""
    moment = as_utc(now)
    day = day_bucket(moment, resolve_timezone(settings.timezone))
    work = _Work(workspace, moment, day, load_store(workspace, moment, recover=False).store,
                 load_phase_signals(workspace, iso_z(moment)), load_daily_ingestion(workspace))
    saved = frozenset(work.store.entries)
    _before_deep(work, settings, _enabled(phases, settings))
    return DeepInputs(work.store, work.signals, saved)


@dataclass
class _Work:
    """The sweep's working set: loaded once under the lock, written once at the end."""

    ws: Path
    now: datetime
    day: str
    store: RecallStore
    signals: PhaseSignals
    checkpoint: Mapping[str, FileFingerprint]
    checkpoint_changed: bool = False
    events: list[dict[str, Any]] = field(default_factory=list)
    reports: dict[str, list[str]] = field(default_factory=dict)
    staged_keys: set[str] = field(default_factory=set)
    sessions: AgentMessages | None = None
    write: bool = False  # the session corpus may be appended to (not a dry run)

    @property
    def now_iso(self) -> str:
        return iso_z(self.now)

    def ingest(self, lookback_days: int, limit: int) -> tuple[int, int]:
        """Daily ingestion into the store; (files read, snippets recorded)."""
        ingestion = collect_daily(self.ws, self.checkpoint, lookback_days=lookback_days,
                                  limit=limit, now=self.now)
        self.checkpoint = ingestion.checkpoint
        self.checkpoint_changed = self.checkpoint_changed or ingestion.changed
        count = 0
        for batch in ingestion.batches:
            hits = eligible_hits(batch.hits)
            if hits:
                results = apply_recalls(self.store, batch.query, hits, day=batch.day,
                                        now_iso=self.now_iso, signal_type="daily",
                                        dedupe_by_query_per_day=True)
                self.events.append(recall_recorded(batch.query, results, self.now_iso))
                count += len(results)
        return ingestion.files_read, count + self._ingest_sessions(lookback_days)

    def _ingest_sessions(self, lookback_days: int) -> int:
        """Other agents' new session messages into the corpus, each a "daily" signal."""
        if self.sessions is None:
            return 0
        lines = place(self.ws, self.sessions(lookback_cutoff(self.now, lookback_days)),
                      write=self.write)
        by_day: dict[str, list[RecallHit]] = {}
        for line in lines:
            if line.new:
                by_day.setdefault(line.day, []).append(line.hit)
        count = 0
        for day, hits in sorted(by_day.items()):
            query = f"{SESSIONS_QUERY}:{day}"
            results = apply_recalls(self.store, query, eligible_hits(hits), day=day,
                                    now_iso=self.now_iso, signal_type="daily",
                                    dedupe_by_query_per_day=True)
            self.events.append(recall_recorded(query, results, self.now_iso))
            count += len(results)
        return count


def _light(work: _Work, settings: DreamingSettings) -> LightSummary:
    files, snippets = work.ingest(settings.light.lookback_days, settings.light.limit)
    staged = light.select(work.store.entries.values(), settings.light, work.now)
    work.staged_keys = {e.key for e in staged}
    work.signals = work.signals.record("light", work.staged_keys, work.now_iso,
                                       work.store.entries)
    work.reports["light"] = light.body(staged)
    return LightSummary(ran=True, ingested_files=files, ingested_snippets=snippets,
                        staged=len(staged), report_path=report_path("light", work.day),
                        examples=tuple(e.snippet for e in staged[:3]))


def _rem(work: _Work, settings: DreamingSettings) -> RemSummary:
    cfg = settings.rem
    _, snippets = work.ingest(cfg.lookback_days, cfg.limit)
    recent = rem.recent_entries(work.store.entries.values(), cfg.lookback_days, work.now)
    found_themes = rem.themes(recent, cfg.limit, cfg.min_pattern_strength)
    staged = [e for e in recent if e.key in work.staged_keys]
    found_truths = rem.truths(staged or recent, cfg.limit)
    work.signals = work.signals.record("rem", [t.key for t in found_truths], work.now_iso,
                                       work.store.entries)
    work.reports["rem"] = rem.body(found_themes, found_truths)
    return RemSummary(ran=True, ingested_snippets=snippets, entries=len(recent),
                      themes=tuple((t.tag, t.strength) for t in found_themes),
                      truths=tuple(t.snippet for t in found_truths),
                      report_path=report_path("rem", work.day))


def _deep(work: _Work, settings: DreamingSettings, moved_aside: str | None,
          memory_max_chars: int) -> tuple[DeepSummary, deep.DeepPlan]:
    plan = deep.plan(work.ws, work.store, work.signals, settings.deep, work.now, work.day,
                     memory_max_chars)
    work.store.entries.update(plan.updates)
    repaired = f"moved an unreadable recall store to {moved_aside}" if moved_aside else None
    work.reports["deep"] = deep.report_body(plan, repaired)
    if plan.promoted:
        work.events.append(promotion_applied(work.ws / MEMORY_FILE, [
            {"key": p.key, "path": p.path, "startLine": p.start_line, "endLine": p.end_line,
             "score": p.score, "recallCount": p.recalls} for p in plan.promoted], work.now_iso))
    summary = DeepSummary(
        ran=True, eligible=len(plan.eligible), promoted=plan.promoted,
        reconciled=len(plan.reconciled), skipped=plan.skipped, size_capped=plan.size_capped,
        left_for_later=plan.left_for_later, memory_bytes=plan.memory_bytes,
        max_memory_bytes=settings.deep.max_memory_bytes, report_path=report_path("deep", work.day))
    return summary, plan


def _commit(work: _Work, result: SweepResult, plan: deep.DeepPlan | None,
            settings: DreamingSettings, tz: tzinfo, diary_text: str) -> SweepResult:
    """Write everything, MEMORY.md first (see the module docstring for why)."""
    ws = work.ws
    if plan is not None and plan.memory_after is not None:
        # Applied to MEMORY.md as it is now, under its lock: edits made since the plan stay.
        # Entries moved out reach the archive note before MEMORY.md loses them: killed in
        # between, they are in both, never in neither.
        sources = [p.path for p in plan.promoted]

        def build(current: str) -> str | None:
            after = plan.apply(current)
            if after is not None and plan.moved_out:
                write_archive(ws, work.day, [b for b in promoted_blocks(current)
                                             if b.key in plan.moved_out], sources)
            return after

        backup = apply_to_memory(ws, build, backups=settings.deep.backups,
                                 sources=sources).backup
        if backup is not None:
            result = replace(result, deep=replace(
                result.deep, backup_path=backup.relative_to(ws).as_posix()))
    save_store(ws, work.store)
    save_phase_signals(ws, work.signals)
    if work.checkpoint_changed:
        save_daily_ingestion(ws, work.checkpoint)
    # A report quotes snippets of the store's notes: it is no more readable than any of them.
    quoted = {entry.path for entry in work.store.entries.values()}
    for phase in result.phases:
        rel = report_path(phase, work.day)
        body = work.reports[phase]
        atomic_write_text(ws, rel, f"{_TITLES[phase]}\n\n" + "\n".join(body) + "\n",
                          sources=quoted)
        work.events.append(dream_completed(phase, ws / rel, len(body), work.now_iso))
    if diary.write_entry(ws, work.now, tz, diary_text) is None:
        result = replace(result, diary_path=None)
    append_events(ws, work.events)
    save_sweep_state(ws, result.to_dict())
    return result


def last_sweep(workspace: Path) -> dict[str, Any] | None:
    """The `to_dict()` of the last sweep that wrote (not dry runs), for `status`; None if none."""
    return load_sweep_state(Path(workspace).expanduser())


def _zone_name(tz: tzinfo) -> str:
    return str(getattr(tz, "key", None) or tz)
