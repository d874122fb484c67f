"""Why is (or isn't) an entry promoted? The equivalent of `openclaw memory promote-explain`.

Read-only: looks at the store, phase signals, MEMORY.md and the live note, writes nothing
(a corrupt store is reported as empty, not moved aside).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from openmemd.config import PHASES, DreamingSettings
from openmemd.text.promotion import MARKER_PREFIX, marker_keys

from .clock import as_utc
from .events import recall_queries
from .layout import MEMORY_FILE
from .markdown_io import read_text
from .memory_md import citation, clean_text, contains_text
from .promotion_score import WEIGHTS, Gate, evaluate
from .recall_store import RecallEntry
from .rehydrate import rehydrate
from .sweep import deep_inputs


@dataclass(frozen=True)
class CandidateExplanation:
    key: str
    path: str
    start_line: int
    end_line: int
    snippet: str
    promoted_at: str | None
    signals: dict[str, Any]
    components: dict[str, float]
    weights: dict[str, float]
    phase_boost: float
    score: float
    gates: tuple[Gate, ...]
    live_source: str | None  # where the text is now, None if gone
    promoted_into: str | None = None  # `MEMORY.md:<line>` of its promotion marker, if there
    queries: tuple[str, ...] = ()  # the searches that recalled these lines (event journal)

    @property
    def eligible(self) -> bool:
        return all(gate.passed for gate in self.gates)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "path": self.path, "startLine": self.start_line,
                "endLine": self.end_line, "snippet": self.snippet,
                "promotedAt": self.promoted_at, "signals": self.signals,
                "components": {k: round(v, 6) for k, v in self.components.items()},
                "weights": self.weights, "phaseBoost": round(self.phase_boost, 6),
                "score": round(self.score, 6), "eligible": self.eligible,
                "gates": [g.to_dict() for g in self.gates], "liveSource": self.live_source,
                "promotedInto": self.promoted_into, "queries": list(self.queries)}

    def format_text(self) -> str:
        s = self.signals
        failed = [g.name for g in self.gates if not g.passed]
        verdict = "eligible for promotion" if not failed else "blocked by: " + ", ".join(failed)
        if self.promoted_at:  # done: what would block another promotion is beside the point
            verdict = (f"promoted {self.promoted_at} into "
                       f"{self.promoted_into or MEMORY_FILE + ' (its marker is gone since)'}")
        snippet = self.snippet if len(self.snippet) <= 200 else self.snippet[:199] + "…"
        lines = [
            f"{self.key}",
            f"  score {self.score:.3f} - {verdict}",
            f"  lines {citation(self.path, self.start_line, self.end_line)}: {snippet}",
            "  recalled by: " + ("; ".join(self.queries) or "-"),
            f"  recalls: {s['recallCount']} search, {s['groundedCount']} grounded, "
            f"{s['dailyCount']} daily ingestion (signals {s['signalCount']})",
            f"  queries: {s['uniqueQueries']} ({s['organicQueries']} organic); days: "
            f"{len(s['recallDays'])} ({s['organicDays']} organic); avg {s['avgScore']:.3f}, "
            f"max {s['maxScore']:.3f}; last recalled {s['ageDays']:.1f} days ago",
            f"  concepts: {', '.join(s['conceptTags']) or '-'}",
            "  components: " + ", ".join(
                f"{name} {value:.3f} x {self.weights[name]:.2f}"
                for name, value in self.components.items()),
            f"  phase boost: +{self.phase_boost:.3f} (light hits {s['lightHits']}, "
            f"REM hits {s['remHits']})",
            "  gates:",
        ]
        for gate in self.gates:
            mark = "pass" if gate.passed else "FAIL"
            lines.append(f"    [{mark}] {gate.name}: {gate.actual} (needs {gate.required})")
        return "\n".join(lines)


def _marker_line(memory_text: str, key: str) -> str | None:
    """`MEMORY.md:<line>` of the promoted text of `key` (the line after its marker)."""
    for number, line in enumerate(memory_text.split("\n"), start=1):
        if MARKER_PREFIX in line and key in marker_keys(line):
            return f"{MEMORY_FILE}:{number + 1}"
    return None


def _matching(entries: Mapping[str, RecallEntry], needle: str,
              cited: tuple[str, int, int] | None) -> list[RecallEntry]:
    """The entry of a key; else, for a citation of a path that has entries, those of its lines
    that overlap the cited ones; else those with the fragment in their path, text or key."""
    if needle in entries:
        return [entries[needle]]
    if cited is not None and any(e.path == cited[0] for e in entries.values()):
        path, first, last = cited
        return [e for e in entries.values()
                if e.path == path and e.start_line <= last and e.end_line >= first]
    folded = needle.casefold()
    return [e for e in entries.values()
            if not folded or folded in e.path.casefold() or folded in e.snippet.casefold()
            or folded in e.key.casefold()]


def explain(workspace: Path, selector: str, settings: DreamingSettings,
            now: datetime | None = None, *, phases: Sequence[str] = PHASES,
            cited: tuple[str, int, int] | None = None) -> list[CandidateExplanation]:
    """Entries matching `selector` (a key, a path fragment or a text fragment), best first,
    scored as a sweep of `phases` now would score them. `cited`: the selector read as a
    search's citation (path, first line, last line), where it reads as one.

    An empty selector explains every entry.
    """
    ws = Path(workspace).expanduser()
    moment = as_utc(now)
    store, signals, saved = deep_inputs(ws, settings, moment, phases)
    memory_text = read_text(ws, MEMORY_FILE) or ""
    markers = marker_keys(memory_text)
    recorded = {key: e for key, e in store.entries.items() if key in saved}
    matches = _matching(recorded, selector.strip(), cited)
    queries = recall_queries(ws) if matches else {}
    out = []
    for entry in matches:
        ev = evaluate(entry, signals.get(entry.key), settings.deep, moment)
        live = rehydrate(ws, entry.path, entry.start_line, entry.end_line, entry.snippet)
        in_memory = entry.key in markers or (
            live is not None and contains_text(memory_text, clean_text(live.snippet)))
        gates = (*ev.gates,
                 Gate("text still in the note", live is not None,
                      f"at {live.path}:{live.start_line}-{live.end_line}" if live else "gone",
                      "present"),
                 Gate("not already in MEMORY.md", not in_memory,
                      "already there" if in_memory else "not there", "not there"))
        signal = signals.get(entry.key)
        out.append(CandidateExplanation(
            key=entry.key, path=entry.path, start_line=entry.start_line,
            end_line=entry.end_line, snippet=entry.snippet, promoted_at=entry.promoted_at,
            signals={
                "recallCount": entry.recall_count, "dailyCount": entry.daily_count,
                "groundedCount": entry.grounded_count, "signalCount": entry.signal_count,
                "organicRecalls": ev.evidence.recalls,
                "uniqueQueries": len(entry.query_hashes),
                "organicQueries": ev.evidence.queries, "recallDays": list(entry.recall_days),
                "organicDays": ev.evidence.days, "conceptTags": list(entry.concept_tags),
                "avgScore": round(entry.avg_score, 6), "maxScore": round(entry.max_score, 6),
                "ageDays": round(ev.age_days, 4),
                "firstRecalledAt": entry.first_recalled_at,
                "lastRecalledAt": entry.last_recalled_at,
                "lightHits": signal.light_hits if signal else 0,
                "remHits": signal.rem_hits if signal else 0,
            },
            components=ev.components.as_dict(), weights=WEIGHTS.as_dict(),
            phase_boost=ev.boost, score=ev.score, gates=gates,
            live_source=f"{live.path}:{live.start_line}-{live.end_line}" if live else None,
            promoted_into=_marker_line(memory_text, entry.key),
            queries=queries.get((entry.path, entry.start_line, entry.end_line), ())))
    out.sort(key=lambda c: (-c.score, c.path, c.start_line))
    return out
