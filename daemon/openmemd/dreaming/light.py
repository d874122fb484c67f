"""Light sleep: stage what was recalled (or written) recently, as OpenClaw's light phase does.

Entries recalled within the lookback are sorted newest first, capped, near-duplicates of the
same note merged, and written as the `memory/dreaming/light/<day>.md` report; each staged key
earns a light phase signal (a small boost in deep ranking). Two choices beyond OpenClaw's
baseline: already-promoted entries are not staged again (they are in MEMORY.md already), and
entries whose text is dreaming output never are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from openmemd.config import LightPhaseSettings

from .clock import UTC, day_within_lookback, lookback_cutoff, parse_iso
from .layout import is_short_term_path
from .recall_store import RecallEntry
from .snippet_filter import is_unpromotable, jaccard

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def within_lookback(entry: RecallEntry, cutoff: datetime) -> bool:
    if any(day_within_lookback(day, cutoff) for day in entry.recall_days):
        return True
    last = parse_iso(entry.last_recalled_at)
    return last is not None and last >= cutoff


def dedupe(entries: Iterable[RecallEntry], threshold: float) -> list[RecallEntry]:
    """Merge entries of the same note whose snippets are at least `threshold` similar."""
    kept: list[RecallEntry] = []
    for entry in entries:
        for index, other in enumerate(kept):
            if other.path == entry.path and jaccard(other.snippet, entry.snippet) >= threshold:
                later = max((other.last_recalled_at, entry.last_recalled_at),
                            key=lambda v: parse_iso(v) or _EPOCH)
                kept[index] = replace(
                    other,
                    recall_count=max(other.recall_count, entry.recall_count),
                    total_score=max(other.total_score, entry.total_score),
                    max_score=max(other.max_score, entry.max_score),
                    query_hashes=tuple(dict.fromkeys((*other.query_hashes, *entry.query_hashes))),
                    recall_days=tuple(sorted(set(other.recall_days) | set(entry.recall_days))),
                    concept_tags=tuple(dict.fromkeys((*other.concept_tags, *entry.concept_tags))),
                    last_recalled_at=later,
                )
                break
        else:
            kept.append(entry)
    return kept


def _newest_first(entries: Iterable[RecallEntry]) -> list[RecallEntry]:
    return sorted(entries, key=lambda e: (-(parse_iso(e.last_recalled_at) or _EPOCH).timestamp(),
                                          -e.recall_count))


def select(entries: Iterable[RecallEntry], settings: LightPhaseSettings,
           now: datetime) -> list[RecallEntry]:
    if settings.limit <= 0:
        return []
    cutoff = lookback_cutoff(now, settings.lookback_days)
    pool = [e for e in entries
            if not e.promoted_at and is_short_term_path(e.path) and not is_unpromotable(e.snippet)
            and within_lookback(e, cutoff)]
    ranked = _newest_first(pool)[:settings.limit]
    return dedupe(ranked, settings.dedupe_similarity)[:settings.limit]


def body(entries: Sequence[RecallEntry]) -> list[str]:
    """The report body, in OpenClaw's exact line format."""
    if not entries:
        return ["- No notable updates."]
    lines: list[str] = []
    for entry in entries:
        lines += [f"- Candidate: {entry.snippet or '(no snippet captured)'}",
                  f"  - confidence: {entry.avg_score:.2f}",
                  f"  - evidence: {entry.evidence}",
                  f"  - recalls: {entry.recall_count}",
                  "  - status: staged"]
    return lines
