"""Deep sleep: decide what to promote into MEMORY.md (a plan; sweep.py does the writing).

Order of work, each step for a reason:
1. Reconcile: any store entry whose key already has a marker in MEMORY.md is marked promoted
   (a crash between writing MEMORY.md and the store, or OpenClaw promoting it) -- never
   appended twice.
2. Rank every unpromoted entry (promotion_score.py); keep those passing all gates, best first.
3. For each, rehydrate from the live note; skip it if its text is gone or has become dreaming
   output; treat it as reconciled if its words are already in MEMORY.md under another key.
4. Append while the result stays within MEMORY.md's bootstrap budget (characters) and
   `max_memory_bytes`; when it would not, move the least recalled entries promoted earlier
   out to the day's archive note (memory_archive.py) if that makes room, else stop at the cap
   (the rest wait). Stop after `limit` promotions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from openmemd.config import ContextSettings, DeepPhaseSettings
from openmemd.text.promotion import marker_keys

from .clock import iso_z
from .layout import MEMORY_FILE
from .markdown_io import read_text
from .memory_archive import Fits, archive_path, make_room, remove_blocks
from .memory_md import (
    SectionEntry,
    clean_text,
    compose,
    in_haystack,
    memory_haystack,
    size_bytes,
    truncate_tokens,
)
from .promotion_score import Evaluation, evaluate, rank
from .recall_store import RecallEntry, RecallStore
from .rehydrate import rehydrate
from .snippet_filter import is_unpromotable
from .state import PhaseSignals
from .sweep_report import PromotedEntry, SkippedCandidate


@dataclass(frozen=True)
class DeepPlan:
    eligible: tuple[Evaluation, ...]
    promoted: tuple[PromotedEntry, ...]
    reconciled: tuple[str, ...]
    skipped: tuple[SkippedCandidate, ...]
    memory_before: str
    memory_after: str | None  # None: MEMORY.md stays as it is
    size_capped: bool
    left_for_later: int
    updates: Mapping[str, RecallEntry]  # store entries to replace (promotedAt, live range)
    messages: tuple[str, ...]
    sections: tuple[SectionEntry, ...] = ()  # what to append to MEMORY.md
    day: str = ""
    moved_out: tuple[str, ...] = ()  # keys of earlier promotions moved to the archive note

    def apply(self, current: str) -> str | None:
        """MEMORY.md with this plan's section appended to `current`, the file as it is at
        write time (not `memory_before`: it may have been edited since); None if nothing is
        left to add. A section whose key or words reached MEMORY.md meanwhile is left out
        (its store entry is marked promoted all the same: it is in MEMORY.md)."""
        # The plan already checked `memory_before`; when the file only grew since (the usual
        # case), only the new text needs checking, which keeps MEMORY.md's lock short.
        fresh = current
        if self.memory_before and current.startswith(self.memory_before):
            fresh = current[len(self.memory_before):]
        markers = marker_keys(fresh)
        haystack = memory_haystack(fresh)
        todo = [s for s in self.sections
                if s.key not in markers and not in_haystack(haystack, s.text)]
        if not todo:
            return None
        return remove_blocks(compose(current, todo, self.day), self.moved_out)

    @property
    def memory_bytes(self) -> int:
        return size_bytes(self.memory_after if self.memory_after is not None
                          else self.memory_before)


def plan(workspace: Path, store: RecallStore, signals: PhaseSignals,
         settings: DeepPhaseSettings, now: datetime, day: str,
         memory_max_chars: int = ContextSettings().bootstrap_max_chars) -> DeepPlan:
    now_iso = iso_z(now)
    existing = read_text(workspace, MEMORY_FILE, strict=True)
    if existing is None and os.path.lexists(workspace / MEMORY_FILE):
        # Never rewrite a MEMORY.md we could not read faithfully: that would lose its content.
        return DeepPlan((), (), (), (), "", None, False, 0, {},
                        ("MEMORY.md is not a readable UTF-8 file; promotion skipped",))
    existing = existing or ""
    haystack = memory_haystack(existing)
    updates, reconciled = _reconcile(store, marker_keys(existing), now_iso)

    evaluations = [evaluate(updates.get(key, entry), signals.get(key), settings, now)
                   for key, entry in store.entries.items()]
    eligible = rank(evaluations)
    messages: list[str] = []
    if settings.limit <= 0:
        messages.append("promotion is off (deep.limit = 0)")

    accepted: list[_Candidate] = []
    skipped: list[SkippedCandidate] = []
    capped = False
    left = 0
    fits = Fits(memory_max_chars, settings.max_memory_bytes)
    moved: tuple[str, ...] = ()
    for position, ev in enumerate(eligible):
        if len(accepted) >= settings.limit:
            left = len(eligible) - position
            break
        found = _candidate(workspace, ev, settings, now_iso)
        if isinstance(found, SkippedCandidate):
            skipped.append(found)
            continue
        section = found.section
        if (in_haystack(haystack, found.live_snippet) or in_haystack(haystack, section.text)
                or any(c.section.text == section.text for c in accepted)):
            updates[section.key] = found.stored
            reconciled.append(section.key)
            continue
        trial = remove_blocks(compose(existing, [c.section for c in accepted] + [section], day),
                              moved)
        room = None if fits(trial) else make_room(
            trial, fits, {c.section.key for c in accepted} | {section.key}, section.recalls)
        if not fits(trial) and room is None:
            capped = True
            left = len(eligible) - position
            messages.append(
                f"stopped at the MEMORY.md size cap ({fits.describe()}; "
                f"MEMORY.md is {len(existing)} characters, "
                f"{size_bytes(existing)} bytes): {left} candidate(s) left for a later sweep")
            break
        if room is not None:
            moved += room[1]
        accepted.append(found)
        updates[section.key] = found.stored

    sections = [c.section for c in accepted]
    after = remove_blocks(compose(existing, sections, day), moved) if accepted else None
    if moved:
        messages.append(f"moved {len(moved)} less recalled promoted entr"
                        f"{'y' if len(moved) == 1 else 'ies'} from MEMORY.md to "
                        f"{archive_path(day)} to keep it within {memory_max_chars} characters")
    return DeepPlan(tuple(eligible), tuple(c.report for c in accepted), tuple(reconciled),
                    tuple(skipped), existing, after, capped, left, updates, tuple(messages),
                    tuple(sections), day, moved)


def _reconcile(store: RecallStore, markers: set[str], now_iso: str
               ) -> tuple[dict[str, RecallEntry], list[str]]:
    """Step 1: the unpromoted store entries whose key already has a marker in MEMORY.md,
    marked promoted now (the updates, and their keys)."""
    updates: dict[str, RecallEntry] = {}
    reconciled: list[str] = []
    for key, entry in store.entries.items():
        if entry.promoted_at is None and key in markers:
            updates[key] = replace(entry, promoted_at=now_iso)
            reconciled.append(key)
    return updates, reconciled


@dataclass(frozen=True)
class _Candidate:
    """An eligible entry read again from its live note: the section MEMORY.md would get, and
    the store entry and report line if it does."""

    section: SectionEntry
    live_snippet: str  # the note's text now (`section.text` is it cleaned and cut)
    stored: RecallEntry  # the entry at its live lines, marked promoted
    report: PromotedEntry


def _candidate(workspace: Path, ev: Evaluation, settings: DeepPhaseSettings, now_iso: str
               ) -> _Candidate | SkippedCandidate:
    """Step 3: `ev`'s entry rehydrated from the live note, or why it cannot be promoted."""
    entry = ev.entry
    live = rehydrate(workspace, entry.path, entry.start_line, entry.end_line, entry.snippet)
    if live is None:
        return _skip(ev, "its text is no longer in the note")
    if is_unpromotable(live.snippet):
        return _skip(ev, "the live text looks like dreaming output")
    text = truncate_tokens(clean_text(live.snippet), settings.max_promoted_snippet_tokens)
    stored = replace(entry, start_line=live.start_line, end_line=live.end_line,
                     snippet=live.snippet, promoted_at=now_iso)
    section = SectionEntry(entry.key, text, ev.score, ev.evidence.recalls, entry.avg_score,
                           f"{live.path}:{live.start_line}-{live.end_line}")
    report = PromotedEntry(
        key=entry.key, path=live.path, start_line=live.start_line, end_line=live.end_line,
        text=text, score=ev.score, components=ev.components.as_dict(),
        phase_boost=ev.boost, recalls=ev.evidence.recalls, daily_signals=entry.daily_count,
        avg_score=entry.avg_score, queries=ev.evidence.queries, days=ev.evidence.days,
        moved=live.moved)
    return _Candidate(section, live.snippet, stored, report)


def _skip(ev: Evaluation, reason: str) -> SkippedCandidate:
    e = ev.entry
    return SkippedCandidate(e.key, e.path, e.start_line, e.end_line, ev.score, reason)


def report_body(deep: DeepPlan, repaired: str | None = None) -> list[str]:
    """memory/dreaming/deep/<day>.md: OpenClaw's lines, plus what stopped a promotion."""
    lines = []
    if repaired:
        lines.append(f"- Repaired recall artifacts: {repaired}.")
    if deep.reconciled:
        lines.append(f"- Reconciled {len(deep.reconciled)} candidate(s) already in MEMORY.md.")
    lines.append(f"- Ranked {len(deep.eligible)} candidate(s) for durable promotion.")
    lines.append(f"- Promoted {len(deep.promoted)} candidate(s) into MEMORY.md.")
    for skip in deep.skipped:
        lines.append(f"- Skipped {skip.path}:{skip.start_line}-{skip.end_line}: {skip.reason}.")
    if deep.moved_out:
        lines.append(f"- Moved {len(deep.moved_out)} less recalled promoted entr"
                     f"{'y' if len(deep.moved_out) == 1 else 'ies'} to "
                     f"{archive_path(deep.day)}.")
    if deep.size_capped:
        lines.append(f"- Stopped at the MEMORY.md size cap: {deep.left_for_later} candidate(s) "
                     "left for a later sweep.")
    return lines
