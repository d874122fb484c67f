"""REM sleep: themes that keep surfacing, and the few snippets that look like lasting truths.

Reflections count, for each concept tag, the recent entries carrying it (strength =
min(1, 2 * count / entries)). Candidate truths rank non-promoted entries by a confidence
mixing average score, recall strength, spacing and concepts. Following OpenClaw's later fix
(#86249 -> #86302), truths are drawn from the entries light sleep staged in this sweep when it
staged any; otherwise from everything recent. Truth keys earn a REM phase signal.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from .clock import lookback_cutoff
from .layout import is_short_term_path
from .light import dedupe, within_lookback
from .recall_store import RecallEntry
from .snippet_filter import is_unpromotable

TRUTH_DEDUPE_SIMILARITY = 0.88
TRUTH_MIN_CONFIDENCE = 0.45


@dataclass(frozen=True)
class Theme:
    tag: str
    count: int
    strength: float
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Truth:
    key: str
    snippet: str
    confidence: float
    evidence: str


def recent_entries(entries: Iterable[RecallEntry], lookback_days: int,
                   now: datetime) -> list[RecallEntry]:
    cutoff = lookback_cutoff(now, lookback_days)
    return [e for e in entries if is_short_term_path(e.path) and within_lookback(e, cutoff)]


def themes(entries: Sequence[RecallEntry], limit: int, min_strength: float) -> list[Theme]:
    stats: dict[str, list[str]] = {}
    for entry in entries:
        for tag in entry.concept_tags:
            if tag:
                evidence = stats.setdefault(tag, [])
                evidence.append(entry.evidence)
    total = max(1, len(entries))
    ranked = []
    for tag, evidence in stats.items():
        strength = min(1.0, len(evidence) / total * 2)
        if strength >= min_strength:
            ranked.append(Theme(tag, len(evidence), strength,
                                tuple(dict.fromkeys(evidence))[:3]))
    ranked.sort(key=lambda t: (-t.strength, -t.count, t.tag))
    return ranked[:max(0, limit)]


def truth_confidence(entry: RecallEntry) -> float:
    recall_strength = min(1.0, math.log1p(entry.recall_count) / math.log1p(6))
    spacing = min(1.0, len(entry.recall_days) / 3)
    conceptual = min(1.0, len(entry.concept_tags) / 6)
    return max(0.0, min(1.0, 0.45 * entry.avg_score + 0.25 * recall_strength + 0.2 * spacing
                        + 0.1 * conceptual))


def truths(entries: Sequence[RecallEntry], limit: int) -> list[Truth]:
    limit = max(1, min(3, limit))
    pool = [e for e in entries if not e.promoted_at and not is_unpromotable(e.snippet)]
    picked = []
    for entry in dedupe(pool, TRUTH_DEDUPE_SIMILARITY):
        confidence = truth_confidence(entry)
        if confidence >= TRUTH_MIN_CONFIDENCE:
            picked.append(Truth(entry.key, entry.snippet or "(no snippet captured)",
                                confidence, entry.evidence))
    picked.sort(key=lambda t: (-t.confidence, t.snippet))
    return picked[:limit]


def body(found_themes: Sequence[Theme], found_truths: Sequence[Truth]) -> list[str]:
    """The report body, in OpenClaw's exact line format."""
    lines = ["### Reflections"]
    if not found_themes:
        lines.append("- No strong patterns surfaced.")
    for theme in found_themes:
        lines += [f"- Theme: `{theme.tag}` kept surfacing across {theme.count} memories.",
                  f"  - confidence: {theme.strength:.2f}",
                  f"  - evidence: {', '.join(theme.evidence)}",
                  "  - note: reflection"]
    lines += ["", "### Possible Lasting Truths"]
    if not found_truths:
        lines.append("- No strong candidate truths surfaced.")
    for truth in found_truths:
        lines.append(f"- {truth.snippet} [confidence={truth.confidence:.2f} "
                     f"evidence={truth.evidence}]")
    return lines
