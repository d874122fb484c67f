#!/usr/bin/env python3
"""What dreaming earns: a conversation set replayed day by day, with and without dreaming.

    python bench/dreaming.py /work/shared/eval/locomo-dev --state-dir DIR [--limit 2]

Each conversation's workspace (one dated note a session) is copied into the state dir and
indexed once; a replayed day only ever sees notes up to that day (later notes are dropped from
results). Each question is asked, by a search as an agent would (hybrid, default settings), on
the next `--asks` (3) session days after the day of its evidence; each asking's hits are
recorded in the recall store at that day's clock (noon UTC). Every replayed night a full
dreaming sweep (light, REM, deep, default settings) runs at 22:00 of that day, and MEMORY.md
is re-indexed.

Reported on the same askings, with and without dreaming:
- context hit: the question's evidence is in the startup context of the day it is asked
  (`context.startup_context`: MEMORY.md as promoted, today's and yesterday's notes). Without
  dreaming MEMORY.md does not exist.
- search hit@5: a result among the first five (notes up to that day, and MEMORY.md) overlaps
  the evidence; a MEMORY.md result counts when the promoted line it holds contains the
  evidence. "Without" is the same search with MEMORY.md's results left out.
- MEMORY.md's size at the end, against its bootstrap budget (context.bootstrap_max_chars).
- promotion precision, two ways:
  - needed: the promoted line is evidence of a question whose asking recorded it (read back
    from the recall journal, memory/.dreams/events.jsonl): it was promoted because it
    answered, not because it stood beside an answer.
  - later: the promoted line is evidence of a question asked after the promotion. With each
    question asked on `--asks` (3) days and OpenClaw's gates (3 recalls, 3 distinct queries
    or days), a line that answers one question passes the gates on that question's last
    asking, so only lines that answer several questions can count: recording exactly the
    evidence lines and nothing else scores 0.15-0.27 "later" on the five LoCoMo-dev
    conversations (0.91-0.96 with a fourth asking). It measures the dataset's shared
    evidence more than the promotion.
  - asked: the promoted line is evidence of some question the replay asks (each is asked on
    days after the note holding its evidence): the issue's "evidence for some later question"
    read as later than the note, which a promoter of exactly the evidence scores 1.0 on.

Embeddings come from the state dir's cache: copy a filled one (e.g. /work/qstate/locomo) there
first, or the first run pays for them. `--limit` takes the first N conversations; `--losses
FILE` writes the askings MEMORY.md cost (found without it, not with it) to study them.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from datetime import time as dtime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))

from openmemd.api import MemoryIndex  # noqa: E402
from openmemd.config import DreamingSettings, EmbeddingSettings, Settings  # noqa: E402
from openmemd.context import startup_context  # noqa: E402
from openmemd.dreaming import RecallHit, record_recalls, run_sweep  # noqa: E402

UTC = timezone.utc
_DAY_RE = re.compile(r"memory/(\d{4}-\d{2}-\d{2})\.md$")
_SPEAKER_RE = re.compile(r"^(?:[-*]\s+)?(?:\*\*[^*]+\*\*:\s*)?")
_WS = re.compile(r"\s+")


def norm(text: str) -> str:
    return _WS.sub(" ", text).strip().lower()


def evidence_core(text: str) -> str:
    """The words of an evidence line without its list marker and speaker: what a promoted
    line (markup cleaned, possibly cut) or a context block still holds; its first 80
    characters, so a cut promotion of a long line still counts."""
    return norm(_SPEAKER_RE.sub("", text.strip()))[:80]


def note_day(path: str) -> str | None:
    m = _DAY_RE.search(path)
    return m.group(1) if m else None


@dataclass
class Tally:
    askings: int = 0
    context_with: int = 0
    context_without: int = 0
    search_with: int = 0
    search_without: int = 0
    promoted: list[tuple[str, str, int, int]] = field(default_factory=list)  # day, path, s, e
    precise: int = 0  # evidence of a question asked after the promotion
    needed: int = 0  # evidence of a question whose asking recorded it
    asked: int = 0  # evidence of a question the replay asks (on days after its evidence)
    only_with: int = 0  # askings found in the top five with MEMORY.md and not without it
    only_without: int = 0
    memory_chars: list[int] = field(default_factory=list)
    losses: list[dict] = field(default_factory=list)  # askings found only without MEMORY.md


def overlaps(path: str, start: int, end: int, span: dict) -> bool:
    return path == span["path"] and start <= span["end_line"] and span["start_line"] <= end


def replay(root: Path, state: Path, name: str, questions: list[dict], asks: int,
           tally: Tally) -> None:
    ws = state / "replay" / name
    if ws.exists():
        shutil.rmtree(ws)
    shutil.copytree(root, ws)
    days = sorted(d for d in (note_day(f"memory/{p.name}") for p in (ws / "memory").iterdir())
                  if d)
    plan: dict[str, list[dict]] = defaultdict(list)  # day -> the questions asked that day
    for q in questions:
        ev_days = [d for d in (note_day(s["path"]) for s in q["relevant"]) if d]
        if not ev_days:
            continue
        after = [d for d in days if d > max(ev_days)][:asks]
        for d in after:
            plan[d].append(q)
    settings = Settings(state_dir=str(state / "state" / "locomo-dev" / name / "default"),
                        embedding=EmbeddingSettings(provider="local"),
                        dreaming=DreamingSettings(timezone="UTC"))
    budget = settings.context.bootstrap_max_chars
    promoted_before = len(tally.promoted)
    with MemoryIndex.open(ws, config=settings) as index:
        index.sync()
        for day in days:
            today = date.fromisoformat(day)
            noon = datetime.combine(today, dtime(12), UTC)
            ctx_with = norm(startup_context(ws, settings, today).text)
            ctx_without = norm(startup_context(root, settings, today).text)
            memory_md = ws / "MEMORY.md"  # as indexed: re-synced after each night's promotion
            memory = memory_md.read_text("utf-8").split("\n") if memory_md.exists() else []
            for q in plan[day]:
                cores = [evidence_core(s["text"]) for s in q["relevant"] if s.get("text")]
                hits = index.search(q["query"], max_results=20, min_score=0.0, record=False,
                                    today=today)
                seen = [h for h in hits if h.path == "MEMORY.md"
                        or (note_day(h.path) or "9999") <= day]
                tally.askings += 1
                tally.context_with += any(c and c in ctx_with for c in cores)
                tally.context_without += any(c and c in ctx_without for c in cores)
                found_with = any(_hit(h, q, cores, memory) for h in seen[:5])
                found_without = any(_hit(h, q, cores, memory) for h in
                                    [h for h in seen if h.path != "MEMORY.md"][:5])
                tally.search_with += found_with
                tally.search_without += found_without
                tally.only_with += found_with and not found_without
                tally.only_without += found_without and not found_with
                if found_without and not found_with:
                    tally.losses.append({
                        "conversation": name, "day": day, "query": q["query"],
                        "evidence": [f"{s['path']}#L{s['start_line']}" for s in q["relevant"]],
                        "top5": [{"citation": f"{h.path}#L{h.start_line}-L{h.end_line}",
                                  "score": round(h.score, 3), "text": h.snippet[:160]}
                                 for h in seen[:5]]})
                # Every hit the agent saw, MEMORY.md's too: the library decides what a
                # search's recall goes to (dreaming/recall.py).
                record_recalls(ws, q["query"], [
                    RecallHit(h.path, h.start_line, h.end_line, h.score, h.snippet, h.source,
                              getattr(h, "focus_start", 0), getattr(h, "focus_end", 0))
                    for h in seen], now=noon, timezone="UTC")
            result = run_sweep(ws, settings.dreaming, now=datetime.combine(
                today, dtime(22), UTC), memory_max_chars=budget)
            for p in result.promoted:
                tally.promoted.append((day, p.path, p.start_line, p.end_line))
                tally.precise += any(
                    overlaps(p.path, p.start_line, p.end_line, s)
                    for later in days if later > day for q in plan[later]
                    for s in q["relevant"])
                tally.asked += any(overlaps(p.path, p.start_line, p.end_line, s)
                                   for qs in plan.values() for q in qs for s in q["relevant"])
            if result.promoted or result.deep.backup_path:
                index.sync()
        tally.needed += sum(map(needed(ws, questions), tally.promoted[promoted_before:]))
        memory = ws / "MEMORY.md"
        tally.memory_chars.append(len(memory.read_text("utf-8")) if memory.exists() else 0)


def needed(ws: Path, questions: list[dict]):  # type: ignore[no-untyped-def]
    """A test of a promoted (day, path, start, end): whether a question whose asking recorded
    an overlapping range (the recall journal) has its evidence there."""
    by_query = {q["query"].strip(): q for q in questions}
    recalled: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    journal = ws / "memory" / ".dreams" / "events.jsonl"
    for line in journal.read_text("utf-8").splitlines() if journal.exists() else []:
        event = json.loads(line)
        if event.get("type") == "memory.recall.recorded" and event["query"] in by_query:
            recalled[event["query"]] += [(r["path"], r["startLine"], r["endLine"])
                                         for r in event["results"]]

    def test(promoted: tuple[str, str, int, int]) -> bool:
        _, path, start, end = promoted
        return any(overlaps(path, start, end, s)
                   for query, ranges in recalled.items()
                   if any(overlaps(p, a, b, {"path": path, "start_line": start,
                                             "end_line": end}) for p, a, b in ranges)
                   for s in by_query[query]["relevant"])
    return test


def _hit(h: object, q: dict, cores: list[str], memory: list[str]) -> bool:
    """Whether a hit holds the evidence: a note's chunk overlaps it; a MEMORY.md chunk holds
    a promoted line containing it (the chunk's lines, like a note's; its 700-character snippet
    is centred on one entry of many and may leave the evidence out)."""
    path, start, end = h.path, h.start_line, h.end_line  # type: ignore[attr-defined]
    if path == "MEMORY.md":
        text = norm(" ".join(memory[start - 1:end]))
        return any(c and c in text for c in cores)
    return any(overlaps(path, start, end, s) for s in q["relevant"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--state-dir", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=0, help="first N conversations only")
    ap.add_argument("--asks", type=int, default=3, help="later session days a question is "
                    "asked on")
    ap.add_argument("--losses", type=Path, help="write here (JSONL) the askings found in the "
                    "top five without MEMORY.md and not with it: query, evidence, the top five")
    args = ap.parse_args(argv)
    dataset = args.dataset.resolve()
    questions: dict[str, list[dict]] = defaultdict(list)
    for line in (dataset / "queries.jsonl").read_text("utf-8").splitlines():
        q = json.loads(line)
        if q["relevant"] and not q.get("meta", {}).get("adversarial"):
            questions[q["workspace"]].append(q)
    names = sorted(questions)[: args.limit or None]
    tally = Tally()
    started = time.monotonic()
    for name in names:
        t0 = time.monotonic()
        replay(dataset / "workspaces" / name, args.state_dir.resolve(), name,
               questions[name], args.asks, tally)
        print(f"  {name}: {time.monotonic() - t0:.0f}s, {tally.askings} askings so far, "
              f"{len(tally.promoted)} promoted", flush=True)
    if args.losses:
        args.losses.write_text("".join(json.dumps(x) + "\n" for x in tally.losses), "utf-8")
    n = max(1, tally.askings)
    promoted = len(tally.promoted)
    print(f"conversations {len(names)}, askings {tally.askings} "
          f"({time.monotonic() - started:.0f}s)")
    print(f"context hit   with dreaming {tally.context_with / n:.3f}   without "
          f"{tally.context_without / n:.3f}")
    print(f"search hit@5  with dreaming {tally.search_with / n:.3f}   without "
          f"{tally.search_without / n:.3f}   (only with {tally.only_with}, only without "
          f"{tally.only_without})")
    print(f"MEMORY.md     max {max(tally.memory_chars, default=0)} characters "
          f"(budget {Settings().context.bootstrap_max_chars})")
    print(f"promoted      {promoted} lines, precision: needed "
          f"{(tally.needed / promoted) if promoted else 0.0:.3f}, later "
          f"{(tally.precise / promoted) if promoted else 0.0:.3f}, asked "
          f"{(tally.asked / promoted) if promoted else 0.0:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
