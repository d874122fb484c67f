"""Search hits as the command line prints them: `score path:start-end`, the snippet, and with
--explain the score's making, one component a line, numbers rounded.

A hit from another namespace (a shared PostgreSQL store searching several) carries
`[namespace NS]`: its path names a file of another workspace, which `openmemd get
--namespace NS path:start-end` reads from the index.
"""

from __future__ import annotations

from typing import Any


def _num(value: float) -> str:
    return f"{value:.3f}"


def hit_lines(hit: dict[str, Any], own_namespace: str, *, explain: bool) -> list[str]:
    head = f"{hit['score']:.3f} {hit['path']}:{hit['startLine']}-{hit['endLine']}"
    namespace = hit.get("namespace")
    if namespace and namespace != own_namespace:
        head += f"  [namespace {namespace}]"
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
