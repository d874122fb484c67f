"""Search hits as the command line prints them: `score path:start-end` (OpenClaw's line, the
chunk's range), then `→ path#L4-L5` when the lines that answer best (the hit's focus, its
citation) are fewer than the chunk's, the snippet, and with --explain the score's making, one
component a line, numbers rounded. Both the range and the citation are what `openmemd get`
takes.

A hit from another namespace (a shared PostgreSQL store searching several) carries
`[namespace NS]`: its path names a file of another workspace, which `openmemd get
--namespace NS path:start-end` reads from the index.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openmemd.cli.output import print_json

if TYPE_CHECKING:
    from openmemd.config import Settings


def _num(value: float) -> str:
    return f"{value:.3f}"


def hit_lines(hit: dict[str, Any], own_namespace: str, *, explain: bool) -> list[str]:
    head = f"{hit['score']:.3f} {hit['path']}:{hit['startLine']}-{hit['endLine']}"
    namespace = hit.get("namespace")
    if namespace and namespace != own_namespace:
        head += f"  [namespace {namespace}]"
    focus = hit.get("focus")
    if hit.get("citation") and focus and (focus["startLine"], focus["endLine"]) != (
            hit["startLine"], hit["endLine"]):
        head += f"  → {hit['citation']}"
    out = [head, *(f"  {line}" for line in hit["snippet"].splitlines())]
    if explain and hit.get("explain"):
        out += [f"  {line}" for line in explain_lines(hit["explain"])]
    return out


def explain_lines(ex: dict[str, Any]) -> list[str]:
    """The breakdown of `pipeline._to_hit`: only what applied to this hit."""
    out = [f"explain: {ex.get('mode')} search, found by {' and '.join(ex.get('legs') or [])}"
           + (" (relaxed fallback)" if ex.get("relaxed") else "")]
    if ex.get("keywordScore") is not None:
        out.append(f"  keyword   {_num(ex['keywordScore'])}"
                   + (f"  bm25 rank {ex['bm25Rank']:.3g}" if ex.get("bm25Rank") is not None
                      else "")
                   + (f"  coverage {ex['coverage']:.0%}" if ex.get("coverage") is not None
                      else ""))
    if ex.get("vectorScore") is not None:
        out.append(f"  vector    {_num(ex['vectorScore'])}"
                   + (f"  cosine {_num(ex['vectorCosine'])}"
                      if ex.get("vectorCosine") is not None else ""))
    if ex.get("gateScore") is not None:
        out.append(f"  gate      {_num(ex['gateScore'])}  (compared with the min score)")
    if ex.get("decay") is not None and ex["decay"] != 1:
        age = f"  age {ex['ageDays']:.1f} days" if ex.get("ageDays") is not None else ""
        out.append(f"  decay     ×{_num(ex['decay'])}{age}")
    if ex.get("mmrPosition") is not None:
        out.append(f"  mmr       position {ex['mmrPosition']}")
    out.append(f"  score     {_num(ex['score'])}")
    return out


def show_search(args: argparse.Namespace, reply: dict[str, Any],
                settings: Callable[[], Settings]) -> int:
    """Print a search's reply. `settings` is called only for what the reply does not say (the
    configured min score of a search that found nothing, the own namespace of a hit that has
    one): a search the daemon answered does not load them otherwise."""
    results = reply["results"]
    meta = {k: v for k, v in reply.items() if k != "results"}
    if meta.get("degraded") and not args.json:
        print(f"openmemd: keyword search only: {meta['degraded']}", file=sys.stderr)
    if not results and (why := unsearched_transcripts(args, settings)):
        print(f"openmemd: {why}", file=sys.stderr)
    if meta.get("indexing") and not args.json:
        # A one-shot command does not stay to embed (a caller waits for it to exit):
        # what it embedded is kept, the rest is left to whoever runs next.
        print("openmemd: the rest is embedded by `openmemd index`, the daemon (`openmemd "
              "run`) or the next search", file=sys.stderr)
    if args.json:
        print_json({"results": results, **meta})
        return 0
    if meta.get("dates"):
        d = meta["dates"]
        span = d["from"] if d["from"] == d["to"] else f"{d['from']} to {d['to']}"
        note = f"\n{d['note']}" if d.get("note") else ""  # reading stopped: a query full of dates
        print(f"Dates: {span} (\"{d['text']}\"){note}\n")

    def min_score() -> float:
        return settings().query.min_score if args.min_score is None else float(args.min_score)

    around = (meta.get("dates") or {}).get("nearestNotes")
    if not results:
        if around and meta["dates"]["about"] == "date":
            print(no_notes_note(around))
        else:  # a topic's nearest miss, and where the notes of its dates would be
            print(nothing_note(min_score(), meta.get("nearest")))
            if around:
                print(no_notes_note(around))
        if meta.get("pendingVectors"):
            print(pending_note(meta["pendingVectors"]))
        return 0
    if around:  # a topic asked of dates no note is from: the notes within a week of them
        # first, else searched as if none were named
        first = around.get("searchedFirst")
        print(no_notes_note(around) + ("; searched those within a week first.\n" if first
                                       else "; these results are from other dates.\n"))
    if (results[0].get("explain") or {}).get("relaxed"):
        print(relaxed_note(min_score()) + "\n")
    own = settings().store.namespace_for(args.agent) if any(
        r.get("namespace") for r in results) else ""  # hits from others are marked
    for r in results:
        print("\n".join(hit_lines(r, own, explain=args.explain)) + "\n")
    return 0


def nothing_note(min_score: float, nearest: dict[str, Any] | None) -> str:
    """What a search that found nothing says: the threshold, and the nearest miss if any."""
    if not nearest:
        return "No matches."
    return (f"nothing at min score {min_score:g}; nearest {nearest['score']:.2f} "
            f"{nearest['citation']} — lower --min-score to see it")


def pending_note(pending: int) -> str:
    """Why "nothing" may not be the last word yet: chunks searched by keyword only."""
    return (f"{pending} chunk{'s' if pending != 1 else ''} still waiting for a vector "
            "(searched by keyword only until embedded; `openmemd status` shows the progress)")


def no_notes_note(around: dict[str, str | None]) -> str:
    """What a search about dates that hold no note says: where the nearest notes are (the
    nearest miss by meaning would be a note of some other day)."""
    near = [f"{side}: {path}" for side, path in (("before", around.get("before")),
                                                 ("after", around.get("after"))) if path]
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
