"""Deep-phase scoring and gates: pure functions of a recall entry, its phase signals and time.

The score is OpenClaw's, unchanged (six weighted signals plus the light/REM boost), so
`openmemd` and `openclaw memory promote-explain` agree on a shared store. The gates differ in
one deliberate way, for issue #108559 ("daily-only signals satisfy gates"):

* Daily ingestion is dreaming reading notes to itself: its query (`__dreaming_daily__:<day>`)
  and day are fixed per note, so it proves nothing about a note being *needed*. The gates
  therefore count organic evidence only: search recalls plus OpenClaw's grounded backfill
  (which a user runs on purpose), distinct real queries, and recall days not contributed by
  ingestion alone. An entry with no organic evidence is never promoted, whatever the limits.
* A day both ingested and searched on cannot be told apart in OpenClaw's format (it stores a
  set of days, not pairs), so such a day is not counted: the gate errs on the side of not
  promoting, and distinct queries usually carry the entry anyway.

Daily signals still feed the score (frequency, relevance) exactly as in OpenClaw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime

from openmemd.config import DeepPhaseSettings

from .clock import days_between, parse_day, parse_iso
from .layout import is_dreaming_output, is_short_term_path
from .recall import DAILY_QUERY_PREFIX, SESSIONS_QUERY_PREFIX, hash_query
from .recall_store import RecallEntry, clamp01
from .snippet_filter import is_unpromotable
from .state import PhaseSignal

LIGHT_BOOST_MAX = 0.06
REM_BOOST_MAX = 0.09
PHASE_HALF_LIFE_DAYS = 14.0


@dataclass(frozen=True)
class Components:
    """The six signals, each in 0..1."""

    frequency: float = 0.0
    relevance: float = 0.0
    diversity: float = 0.0
    recency: float = 0.0
    consolidation: float = 0.0
    conceptual: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def weighted(self, weights: Components) -> float:
        return float(sum(getattr(self, f.name) * getattr(weights, f.name)
                         for f in fields(self)))


WEIGHTS = Components(frequency=0.24, relevance=0.30, diversity=0.15, recency=0.15,
                     consolidation=0.10, conceptual=0.06)


def frequency_component(signal_count: int) -> float:
    return clamp01(math.log1p(max(0, signal_count)) / math.log1p(10))


def recency_component(age_days: float, half_life_days: float) -> float:
    if not math.isfinite(age_days) or age_days < 0 or half_life_days <= 0:
        return 1.0
    return math.exp(-math.log(2) / half_life_days * age_days)


def consolidation_component(recall_days: Sequence[str], grounded_count: int = 0) -> float:
    """Spaced repetition: more distinct days over a wider span score higher."""
    spaced = 0.0
    parsed = sorted(d for d in (parse_day(day) for day in recall_days) if d is not None)
    if len(recall_days) == 1 or (recall_days and len(parsed) <= 1):
        spaced = 0.2
    elif len(parsed) > 1:
        span_days = (parsed[-1] - parsed[0]).days
        spacing = clamp01(math.log1p(len(parsed) - 1) / math.log1p(4))
        spaced = clamp01(0.55 * spacing + 0.45 * clamp01(span_days / 7))
    return max(spaced, clamp01(grounded_count / 3))


def conceptual_component(concept_tags: Sequence[str]) -> float:
    return clamp01(len(concept_tags) / 6)


def phase_boost(signal: PhaseSignal | None, now: datetime) -> float:
    """Up to +0.06 for light and +0.09 for REM hits, fading with a 14-day half-life."""
    if signal is None:
        return 0.0

    def part(hits: int, last: str | None, cap: float) -> float:
        seen = parse_iso(last)
        if seen is None:
            return 0.0
        strength = clamp01(math.log1p(max(0, hits)) / math.log1p(6))
        return cap * strength * clamp01(recency_component(days_between(seen, now),
                                                          PHASE_HALF_LIFE_DAYS))

    return clamp01(part(signal.light_hits, signal.last_light_at, LIGHT_BOOST_MAX)
                   + part(signal.rem_hits, signal.last_rem_at, REM_BOOST_MAX))


@dataclass(frozen=True)
class Evidence:
    """What the gates count: organic evidence, ingestion excluded."""

    recalls: int  # recallCount + groundedCount
    queries: int  # distinct query hashes that are not dreaming's own
    days: int  # recall days not contributed by ingestion alone

    @property
    def diversity(self) -> int:
        return max(self.queries, self.days)


def organic_evidence(entry: RecallEntry) -> Evidence:
    synthetic: dict[str, str] = {}
    for day in entry.recall_days:
        for prefix in (DAILY_QUERY_PREFIX, SESSIONS_QUERY_PREFIX):
            synthetic[hash_query(prefix + day)] = day
    queries = [h for h in entry.query_hashes if h not in synthetic]
    ingested_days = {synthetic[h] for h in entry.query_hashes if h in synthetic}
    days = [d for d in entry.recall_days if d not in ingested_days]
    return Evidence(entry.recall_count + entry.grounded_count, len(queries), len(days))


@dataclass(frozen=True)
class Gate:
    name: str
    passed: bool
    actual: str
    required: str

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "passed": self.passed, "actual": self.actual,
                "required": self.required}


@dataclass(frozen=True)
class Evaluation:
    """Everything the deep phase knows about one entry: signals, score and gates."""

    entry: RecallEntry
    components: Components
    boost: float
    raw_score: float
    evidence: Evidence
    age_days: float
    gates: tuple[Gate, ...]

    @property
    def score(self) -> float:
        return clamp01(self.raw_score)

    @property
    def eligible(self) -> bool:
        return all(gate.passed for gate in self.gates)

    @property
    def failed(self) -> tuple[Gate, ...]:
        return tuple(g for g in self.gates if not g.passed)


def evaluate(entry: RecallEntry, signal: PhaseSignal | None, settings: DeepPhaseSettings,
             now: datetime) -> Evaluation:
    last = parse_iso(entry.last_recalled_at)
    age = days_between(last, now) if last else 0.0
    components = Components(
        frequency=frequency_component(entry.signal_count),
        relevance=entry.avg_score,
        diversity=clamp01(max(len(entry.query_hashes), len(entry.recall_days)) / 5),
        recency=clamp01(recency_component(age, settings.recency_half_life_days)),
        consolidation=consolidation_component(entry.recall_days, entry.grounded_count),
        conceptual=conceptual_component(entry.concept_tags),
    )
    boost = phase_boost(signal, now)
    raw = components.weighted(WEIGHTS) + boost
    evidence = organic_evidence(entry)
    min_recalls = max(1, settings.min_recall_count)
    promotable = (entry.source == "memory" and is_short_term_path(entry.path)
                  and not is_dreaming_output(entry.path) and not is_unpromotable(entry.snippet))
    gates = (
        Gate("not yet promoted", entry.promoted_at is None,
             f"promoted {entry.promoted_at}" if entry.promoted_at else "not promoted",
             "not promoted"),
        Gate("promotable note text", promotable,
             "dated note" if promotable else "not a promotable short-term snippet",
             "dated note, not dreaming output"),
        Gate("recalls", evidence.recalls >= min_recalls,
             f"{evidence.recalls} organic ({entry.recall_count} search + "
             f"{entry.grounded_count} grounded; {entry.daily_count} daily ingestion not counted)",
             f">= {min_recalls}"),
        Gate("distinct queries or days", evidence.diversity >= settings.min_unique_queries,
             f"{evidence.queries} queries, {evidence.days} days",
             f">= {settings.min_unique_queries}"),
        Gate("age", age <= settings.max_age_days, f"{age:.1f} days since last recall",
             f"<= {settings.max_age_days:g} days"),
        Gate("score", raw >= settings.min_score, f"{clamp01(raw):.3f}",
             f">= {settings.min_score:g}"),
    )
    return Evaluation(entry, components, boost, raw, evidence, age, gates)


def rank(evaluations: Sequence[Evaluation]) -> list[Evaluation]:
    """Eligible entries, best first: score, then recall count, then path (OpenClaw's order)."""
    eligible = [e for e in evaluations if e.eligible]
    return sorted(eligible, key=lambda e: (-e.score, -e.entry.recall_count, e.entry.path,
                                           e.entry.start_line))
