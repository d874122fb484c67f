"""Search hits as the command line prints them: `score path:start-end` (OpenClaw's line, the
chunk's range), then `→ path#L4-L5` when the lines that answer best (the hit's focus, its
citation) are fewer than the chunk's, the snippet, a line saying why when a hit scores under
--min-score (its gate passed it), and with --explain the score's making, one component a line,
numbers rounded. Both the range and the citation are what `openmemd get` takes.

A hit from another namespace (a shared PostgreSQL store searching several) carries
`[namespace NS]`: its path names a file of another workspace, which `openmemd get
--namespace NS path:start-end` reads from the index.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from openmemd.cli.output import print_json
from openmemd.protocol.replies import Explain, Hit, Nearest, NearestNotes, SearchReply

if TYPE_CHECKING:
    from openmemd.config import Settings


def _num(value: float) -> str:
    return f"{value:.3f}"


def hit_lines(hit: Hit, own_namespace: str, *, explain: bool,
              min_score: float | None = None) -> list[str]:
    head = f"{hit.score:.3f} {hit.path}:{hit.start_line}-{hit.end_line}"
    if hit.namespace and hit.namespace != own_namespace:
        head += f"  [namespace {hit.namespace}]"
    focus = hit.focus
    if hit.citation and focus and (focus.start_line, focus.end_line) != (
            hit.start_line, hit.end_line):
        head += f"  → {hit.citation}"
    out = [head, *(f"  {line}" for line in hit.snippet.splitlines())]
    gate = gate_line(hit, min_score)
    if gate:
        out.append(f"  {gate}")
    if explain and hit.explain is not None:
        out += [f"  {line}" for line in explain_lines(hit.explain)]
    return out


def gate_line(hit: Hit, min_score: float | None) -> str:
    """Why a hit scoring under the min score is shown: its gate, the evidence score the min
    score is compared with (`search/evidence.py`), passed it; the score only orders."""
    ex = hit.explain
    if min_score is None or ex is None or ex.gate_score is None or hit.score >= min_score \
            or ex.gate_score < min_score:
        return ""
    return (f"shown under min score {min_score:g}: its gate {_num(ex.gate_score)} passed it "
            "(the score orders the results, the gate decides which are shown)")


def explain_lines(ex: Explain) -> list[str]:
    """The breakdown of `pipeline._to_hit`: only what applied to this hit."""
    out = [f"explain: {ex.mode} search, found by {' and '.join(ex.legs)}"
           + (" (relaxed fallback)" if ex.relaxed else "")]
    if ex.keyword_score is not None:
        out.append(f"  keyword   {_num(ex.keyword_score)}"
                   + (f"  bm25 rank {ex.bm25_rank:.3g}" if ex.bm25_rank is not None else "")
                   + (f"  coverage {ex.coverage:.0%}" if ex.coverage is not None else ""))
    if ex.vector_score is not None:
        out.append(f"  vector    {_num(ex.vector_score)}"
                   + (f"  cosine {_num(ex.vector_cosine)}" if ex.vector_cosine is not None
                      else ""))
    if ex.gate_score is not None:
        out.append(f"  gate      {_num(ex.gate_score)}  (compared with the min score)")
    if ex.decay is not None and ex.decay != 1:
        age = f"  age {ex.age_days:.1f} days" if ex.age_days is not None else ""
        out.append(f"  decay     ×{_num(ex.decay)}{age}")
    if ex.mmr_position is not None:
        out.append(f"  mmr       position {ex.mmr_position}")
    out.append(f"  score     {_num(ex.score)}")
    return out


def show_search(args: argparse.Namespace, reply: SearchReply,
                settings: Callable[[], Settings]) -> int:
    """Print a search's reply. `settings` is called only for what the reply does not say (the
    configured min score of a search that found nothing, the own namespace of a hit that has
    one): a search the daemon answered does not load them otherwise."""
    results = reply.results
    if reply.degraded and not args.json:
        print(f"openmemd: keyword search only: {reply.degraded}", file=sys.stderr)
    if not results and (why := unsearched_transcripts(args, settings)):
        print(f"openmemd: {why}", file=sys.stderr)
    if reply.indexing and not args.json:
        # A one-shot command does not stay to embed (a caller waits for it to exit):
        # what it embedded is kept, the rest is left to whoever runs next.
        print("openmemd: the rest is embedded by `openmemd index`, the daemon (`openmemd "
              "run`) or the next search", file=sys.stderr)
    if args.json:
        print_json(reply.to_json())
        return 0
    dates = reply.dates
    if dates is not None:
        span = dates.start if dates.start == dates.end else f"{dates.start} to {dates.end}"
        note = f"\n{dates.note}" if dates.note else ""  # reading stopped: a query full of dates
        print(f"Dates: {span} (\"{dates.text}\"){note}\n")

    def min_score() -> float:
        return settings().query.min_score if args.min_score is None else float(args.min_score)

    around = dates.nearest_notes if dates is not None else None
    if not results:
        if around and dates is not None and dates.about == "date":
            print(no_notes_note(around))
        else:  # a topic's nearest miss, and where the notes of its dates would be
            print(nothing_note(min_score(), reply.nearest))
            if around:
                print(no_notes_note(around))
        if reply.pending_vectors:
            print(pending_note(reply.pending_vectors))
        return 0
    if around:  # a topic asked of dates no note is from: the notes within a week of them
        # first, else searched as if none were named
        print(no_notes_note(around) + ("; searched those within a week first.\n"
                                       if around.searched_first
                                       else "; these results are from other dates.\n"))
    first = results[0].explain
    if first is not None and first.relaxed:
        print(relaxed_note(min_score()) + "\n")
    own = settings().store.namespace_for(args.agent) if any(
        r.namespace for r in results) else ""  # hits from others are marked
    asked = None if args.min_score is None else float(args.min_score)  # --min-score
    for r in results:
        print("\n".join(hit_lines(r, own, explain=args.explain, min_score=asked)) + "\n")
    return 0


def nothing_note(min_score: float, nearest: Nearest | None) -> str:
    """What a search that found nothing says: the threshold, and the nearest miss if any."""
    if not nearest:
        return "No matches."
    return (f"nothing at min score {min_score:g}; nearest {nearest.score:.2f} "
            f"{nearest.citation} — lower --min-score to see it")


def pending_note(pending: int) -> str:
    """Why "nothing" may not be the last word yet: chunks searched by keyword only."""
    return (f"{pending} chunk{'s' if pending != 1 else ''} still waiting for a vector "
            "(searched by keyword only until embedded; `openmemd status` shows the progress)")


def no_notes_note(around: NearestNotes) -> str:
    """What a search about dates that hold no note says: where the nearest notes are (the
    nearest miss by meaning would be a note of some other day)."""
    near = [f"{side}: {path}" for side, path in (("before", around.before),
                                                 ("after", around.after)) if path]
    return "No notes from those dates; nearest " + "; ".join(near) if near \
        else "No notes from those dates, nor any other dated note."


def relaxed_note(min_score: float) -> str:
    return (f"(relaxed: no result passed min score {min_score:g}; "
            "showing keyword matches)")


def unsearched_transcripts(args: argparse.Namespace,
                           settings: Callable[[], Settings]) -> str | None:
    """Why a search asked of the transcripts found none there: they are not indexed, or the
    folder holds none (`*.jsonl` and their archives)."""
    if "sessions" not in (args.sources or ()):
        return None
    from openmemd.config.layers import sessions_dir

    s = settings()
    if "sessions" not in s.for_agent(args.agent).sources:
        where = s.config_file or "the config file"
        return ('transcripts are not indexed: set sources = ["memory", "sessions"] in '
                f"{where} to search them")
    workspace = Path(args.workspace).expanduser() if args.workspace \
        else s.workspace_for(args.agent)
    folder = sessions_dir(s.for_agent(args.agent), args.agent, workspace)
    try:
        names = [p.name for p in folder.iterdir()]
    except OSError:
        names = []
    if not any(n.endswith(".jsonl") or ".jsonl.reset." in n or ".jsonl.deleted." in n
               for n in names):
        return f"no transcripts in {folder} (sessions_dir) to search"
    return None
