#!/usr/bin/env python3
"""Search quality on a retrieval dataset, through the real library API (`MemoryIndex`).

    python bench/quality.py /path/to/eval/locomo-dev [--state-dir DIR] [--modes ...]

DATASET is a folder with `queries.jsonl` and either `workspaces/<name>/` (one workspace per
question's "workspace" field) or `workspace.tar.gz` (one workspace, unpacked once into the
state dir); a question set beside its corpus (`locomo-dev/dates/`, `locomo-dev/absent/`) uses
the parent's workspaces and indexes (no embedding paid twice). For questions that name dates
(`locomo-dev/dates/`: the real "today" serves, unless a question's meta pins one) it also
says how many queries were understood to name one (the reply's `dates`). Queries name their
evidence as `{"path", "start_line", "end_line"}` spans; a result matches when it is the same
file and its lines overlap a span (the dataset's own `score.py` rules, imported from the
dataset's parent or grandparent folder when it is there).

Every workspace is indexed with the default settings (400/80-token chunks); top-level folders
other than `memory/` and `sessions/` are added as extra paths so document collections are
indexed too. Embeddings land in the embedding cache under `--state-dir`, so only the first run
pays for them (LoCoMo-dev ~5 min, CMRC-dev ~25 min on 2 cores); keyword-only mode uses its own
FTS-only index. Prints, for each mode (keyword-only, vector-only, hybrid, and hybrid with MMR and
temporal decay), hit@1/5/10, MRR@10, nDCG@10, the mean lines per returned chunk and the search
time per query (the first mode on an index includes embedding each query). Decay uses the real
clock, so dated notes from years ago are down-weighted by their relative age.

Two more figures for every mode: `focus@5`, the share of questions whose evidence lies inside
the focus (`SearchHit.focus_*`, the lines a hit says answer best) of one of the first five
results, and `flines`, the mean lines of those focuses; and `returned`, the share of questions
that got any result at all (with `--defaults`, the configured max_results and min_score: the
figure for a no-answer set such as `locomo-dev/absent`, whose questions name no evidence and
whose workspaces are its parent's; or `bench/locomo-offtopic.jsonl`, 40 real-word questions
about things the LoCoMo-dev conversations never discuss, asked of each of its five workspaces
with `--queries`; `bench/locomo-offtopic-names.jsonl`, 20 such questions naming one of each
conversation's speakers, "What is Caroline's blood type?"; `bench/cmrc-offtopic.jsonl`, 20
personal questions in Chinese for CMRC-dev). `--misses DIR` writes each mode's focus misses
(evidence in a top-5 hit's chunk, not its focus), a JSON line a question.

`--dream` measures a workspace after dreaming: each workspace is copied into the state dir, its
questions are asked once as recorded searches (what an agent's use leaves in the recall store),
a full dreaming sweep (light, REM, deep) runs on the copy, and the copy -- now with its
`memory/dreaming/` reports and any MEMORY.md promotions -- is indexed and measured, each mode
twice: as configured (reports left out of results, the default) and as `<mode>+reports` (with
`query.dreaming_reports = true`). Its indexes start from a copy of the plain run's (same
`--state-dir`), so embeddings are not paid twice.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import math
import shutil
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from datetime import date as _date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))

from openmemd.api import MemoryIndex
from openmemd.config import (
    EmbeddingSettings,
    HybridSettings,
    MmrSettings,
    QuerySettings,
    Settings,
    StoreSettings,
    TemporalDecaySettings,
)

MODES: dict[str, QuerySettings] = {
    "keyword": QuerySettings(),
    "vector": QuerySettings(hybrid=HybridSettings(enabled=False)),
    "hybrid": QuerySettings(),
    "hybrid-rrf": QuerySettings(hybrid=HybridSettings(fusion="rrf")),
    "hybrid+mmr+decay": QuerySettings(mmr=MmrSettings(enabled=True),
                                      temporal_decay=TemporalDecaySettings(enabled=True)),
}
KS = (1, 5, 10)


# -- scoring (the dataset's score.py when present, else the same rules here) ----------------------

def _load_scorer(dataset: Path) -> Any:
    path = next((d / "score.py" for d in (dataset.parent, dataset.parent.parent)
                 if (d / "score.py").is_file()), None)
    if path is None:
        return None
    spec = importlib.util.spec_from_file_location("_dataset_score", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _matches(res: dict, span: dict) -> bool:
    if not (res["path"] == span["path"] or res["path"].endswith("/" + span["path"])):
        return False
    return res["start_line"] <= span["end_line"] and span["start_line"] <= res["end_line"]


def _score_query(results: list[dict], spans: list[dict]) -> dict[str, float]:
    first, covered, gains = None, set(), []
    for rank, res in enumerate(results[: max(KS)], 1):
        new = 0
        for j, span in enumerate(spans):
            if _matches(res, span):
                first = first or rank
                if j not in covered:
                    covered.add(j)
                    new = 1
        gains.append(new)
    out = {}
    for k in KS:
        out[f"hit@{k}"] = 1.0 if first is not None and first <= k else 0.0
    out["mrr@10"] = 1.0 / first if first is not None and first <= 10 else 0.0
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:10]))
    idcg = sum(1 / math.log2(i + 2) for i in range(min(10, len(spans))))
    out["ndcg@10"] = dcg / idcg if idcg else 0.0
    top = results[:10]
    out["lines@10"] = (sum(r["end_line"] - r["start_line"] + 1 for r in top) / len(top)
                       if top else 0.0)
    return out


def score(scorer: Any, results: list[dict], query: dict) -> dict[str, float]:
    if scorer is None:
        spans = query["relevant"]
        return _score_query(results, spans)
    spans = scorer.spans_for(query, "primary")
    raw = scorer.score_query(results, spans, list(KS))
    return {**{f"hit@{k}": raw[f"hit@{k}"] for k in KS}, "mrr@10": raw["mrr@10"],
            "ndcg@10": raw["ndcg@10"], "lines@10": raw["lines@10"]}


# -- workspaces -----------------------------------------------------------------------------------

def focus_figures(hits: list[Any], spans: list[dict]) -> dict[str, float]:
    """focus@5 (evidence inside the focus of a top-5 hit) and the mean lines of those focuses."""
    top = hits[:5]
    inside = any(_matches({"path": h.path, "start_line": h.focus_start or h.start_line,
                           "end_line": h.focus_end or h.end_line}, span)
                 for h in top for span in spans)
    lines = [(h.focus_end or h.end_line) - (h.focus_start or h.start_line) + 1 for h in top]
    return {"focus@5": 1.0 if inside else 0.0,
            "flines": sum(lines) / len(lines) if lines else 0.0,
            "returned": 1.0 if hits else 0.0}


def focus_miss(root: Path, query: dict, hits: list[Any]) -> dict | None:
    """A question whose evidence lies in a top-5 hit's chunk but outside its focus: the query,
    the focus lines and the evidence lines (for `--misses`), or None."""
    spans = query["relevant"]

    def inside(path: str, start: int, end: int) -> bool:
        return any(_matches({"path": path, "start_line": start, "end_line": end}, s)
                   for s in spans)

    top = hits[:5]
    if any(inside(h.path, h.focus_start or h.start_line, h.focus_end or h.end_line)
           for h in top):
        return None
    hit = next((h for h in top if inside(h.path, h.start_line, h.end_line)), None)
    if hit is None:
        return None
    lines = (root / hit.path).read_text(encoding="utf-8").split("\n")
    focus = range(hit.focus_start or hit.start_line, (hit.focus_end or hit.end_line) + 1)
    evidence = [n for s in spans if s["path"] == hit.path
                for n in range(max(s["start_line"], hit.start_line),
                               min(s["end_line"], hit.end_line) + 1)]
    return {"id": query["id"], "query": query["query"], "path": hit.path,
            "chunk": [hit.start_line, hit.end_line],
            "focus": {n: lines[n - 1] for n in focus if n <= len(lines)},
            "evidence": {n: lines[n - 1] for n in evidence if n <= len(lines)}}


def corpus_of(dataset: Path) -> Path:
    """The folder holding the question set's workspaces: its own, or its parent's."""
    if (dataset / "workspaces").is_dir() or (dataset / "workspace.tar.gz").is_file():
        return dataset
    return dataset.parent


def workspace_root(dataset: Path, name: str, state: Path) -> Path:
    dataset = corpus_of(dataset)
    folder = dataset / "workspaces" / name
    if folder.is_dir():
        return folder
    archive = dataset / "workspace.tar.gz"
    if archive.is_file():
        target = state / "workspaces" / dataset.name
        marker = target / ".unpacked"
        if not marker.exists():
            target.mkdir(parents=True, exist_ok=True)
            with tarfile.open(archive) as tar:
                tar.extractall(target, filter="data")
            marker.touch()
        inner = [p for p in target.iterdir() if p.is_dir()]
        base = inner[0] if len(inner) == 1 else target
        return (base / name).resolve() if name not in ("", ".") else base
    raise SystemExit(f"{dataset}: no workspaces/{name}/ and no workspace.tar.gz")


def extra_paths(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith(".")
                  and p.name not in ("memory", "sessions"))


def dream_copy(root: Path, state: Path, dataset: str, name: str, model: str,
               queries: list[dict]) -> Path:
    """A fresh copy of the workspace after recorded searches and one dreaming sweep."""
    from openmemd.dreaming import run_sweep

    copy = state / "dreamed" / dataset / name.replace("/", "_")
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(root, copy, symlinks=True)
    kind = model or "default"
    settings = settings_for(_index_state(state, dataset, name, kind, dream=True), copy,
                            "hybrid", model)
    started = time.monotonic()
    with MemoryIndex.open(copy, config=settings) as index:
        index.sync()
        for q in queries:
            index.search(q["query"], record=True)
        index.flush_recalls(timeout=60)
    result = run_sweep(copy, settings.dreaming)
    print(f"  dreamed {name} in {time.monotonic() - started:.1f}s: staged {result.light.staged}, "
          f"promoted {len(result.promoted)}, reports {', '.join(result.report_paths)}",
          flush=True)
    return copy


def _index_state(state: Path, dataset: str, name: str, kind: str, *, dream: bool) -> Path:
    plain = state / "state" / dataset / name.replace("/", "_") / kind
    if not dream:
        return plain
    dreamed = plain.with_name(kind + "+dream")
    if not dreamed.exists() and plain.exists():  # reuse the plain run's embeddings
        shutil.copytree(plain, dreamed)
    return dreamed


# `--store-url`: index into PostgreSQL instead, one namespace per index (the state dir's path
# below --state-dir names it, so a re-run reuses the namespace and its embeddings).
STORE_URL = ""


def settings_for(state: Path, root: Path, mode: str, model: str) -> Settings:
    provider = "none" if mode == "keyword" else "local"
    store = StoreSettings()
    if STORE_URL:
        store = StoreSettings(backend="postgres", url=STORE_URL,
                              namespace="quality/" + "/".join(state.parts[-4:]))
    return Settings(
        state_dir=str(state), extra_paths=extra_paths(root),
        embedding=EmbeddingSettings(provider=provider, model=model),
        query=MODES[mode], store=store)


# -- main -----------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--state-dir", type=Path, default=None,
                    help="index and embedding cache (default: a temp dir, nothing is reused)")
    ap.add_argument("--modes", default=",".join(MODES),
                    help=f"comma-separated subset of {', '.join(MODES)}")
    ap.add_argument("--model", default="", help="local embedding model (default: e5)")
    ap.add_argument("--limit", type=int, default=0, help="first N questions only")
    ap.add_argument("--min-score", type=float, default=0.0,
                    help="min_score for every search (0 measures pure ranking)")
    ap.add_argument("--defaults", action="store_true",
                    help="search with the configured max_results and min_score (not 10 and "
                         "--min-score)")
    ap.add_argument("--dream", action="store_true",
                    help="measure after recorded searches and a dreaming sweep (see above)")
    ap.add_argument("--runs", type=Path, default=None,
                    help="write one run file per mode here (score.py format)")
    ap.add_argument("--misses", type=Path, default=None,
                    help="write here, per mode, the focus misses (evidence in a top-5 hit's "
                         "chunk, not in its focus: query, focus lines, evidence lines)")
    ap.add_argument("--queries", type=Path, default=None,
                    help="ask these questions (JSONL) of DATASET's workspaces instead of its own")
    ap.add_argument("--store-url", default="",
                    help="index into PostgreSQL at this libpq URL ([store] backend = postgres)")
    args = ap.parse_args(argv)
    global STORE_URL
    STORE_URL = args.store_url

    dataset = args.dataset.resolve()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        ap.error(f"unknown mode(s) {unknown}")
    source = args.queries or dataset / "queries.jsonl"
    label = source.stem if args.queries else dataset.name
    queries = [json.loads(line) for line in
               source.read_text(encoding="utf-8").splitlines() if line]
    if args.limit:
        queries = queries[: args.limit]
    by_workspace: dict[str, list[dict]] = defaultdict(list)
    for q in queries:
        by_workspace[q["workspace"]].append(q)
    scorer = _load_scorer(dataset)
    tmp = None
    if args.state_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="openmemd-quality-")
        state = Path(tmp.name)
    else:
        state = args.state_dir.resolve()
    print(f"{label}: {len(queries)} questions in {len(by_workspace)} workspace(s)")

    variants = {m: MODES[m] for m in modes}
    if args.dream:
        variants.update({f"{m}+reports": dataclasses.replace(MODES[m], dreaming_reports=True)
                         for m in modes})
    totals: dict[str, dict[str, float]] = {m: defaultdict(float) for m in variants}
    understood: dict[str, int] = defaultdict(int)  # queries whose reply names dates
    corpus = corpus_of(dataset).name  # indexes are the corpus's, whichever question set
    timing: dict[str, float] = defaultdict(float)
    runs: dict[str, list[str]] = defaultdict(list)
    misses: dict[str, list[str]] = defaultdict(list)
    for name, qs in by_workspace.items():
        root = workspace_root(dataset, name, state)
        if args.dream:
            root = dream_copy(root, state, corpus, name, args.model, qs)
        # One index per kind: FTS-only for keyword mode, the embedding model for the rest
        # (query settings are not part of the index identity, so modes share it).
        kinds: dict[str, list[str]] = defaultdict(list)
        for mode in modes:
            kinds["fts" if mode == "keyword" else (args.model or "default")].append(mode)
        for kind, kind_modes in kinds.items():
            mode_state = _index_state(state, corpus, name, kind, dream=args.dream)
            settings = settings_for(mode_state, root, kind_modes[0], args.model)
            with MemoryIndex.open(root, config=settings) as index:
                started = time.monotonic()
                report = index.sync()
                sync_s = time.monotonic() - started
                if sync_s > 1:
                    print(f"  indexed {name} ({kind}) in {sync_s:.1f}s: {report.chunks} "
                          f"chunks, {report.vectors_embedded} embedded", flush=True)
                for mode in [v for v in variants if v.split("+reports")[0] in kind_modes]:
                    index.settings = dataclasses.replace(settings, query=variants[mode])
                    started = time.monotonic()
                    for q in qs:
                        day = q.get("meta", {}).get("today")  # asked on that day
                        today = _date.fromisoformat(day) if day else None
                        found = index.searched(q["query"], record=False, today=today, **(
                            {} if args.defaults else {"max_results": 10,
                                                      "min_score": args.min_score}))
                        hits, understood[mode] = found.hits, understood[mode] + bool(found.dates)
                        results = [{"path": h.path, "start_line": h.start_line,
                                    "end_line": h.end_line} for h in hits]
                        figures = {**score(scorer, results, q),
                                   **focus_figures(hits, q["relevant"])}
                        for key, value in figures.items():
                            totals[mode][key] += value
                        if args.runs:
                            runs[mode].append(json.dumps({"id": q["id"], "results": results}))
                        miss = focus_miss(root, q, hits) if args.misses else None
                        if miss is not None:
                            misses[mode].append(json.dumps(miss, ensure_ascii=False))
                    timing[mode] += time.monotonic() - started

    n = len(queries)
    keys = ([f"hit@{k}" for k in KS] + ["mrr@10", "ndcg@10", "lines@10"]
            + ["focus@5", "flines", "returned"])
    print(f"\n{'mode':18s}" + "".join(f"{k:>10s}" for k in keys) + f"{'ms/query':>10s}")
    for mode in variants:
        row = "".join(f"{totals[mode][k] / n:10.4f}" for k in keys)
        print(f"{mode:18s}{row}{1000 * timing[mode] / n:10.1f}")
    for mode in variants:
        if understood[mode]:
            print(f"{mode}: {understood[mode]}/{n} queries understood to name a date")
    if args.runs:
        args.runs.mkdir(parents=True, exist_ok=True)
        for mode, lines in runs.items():
            (args.runs / f"{label}.{mode}.jsonl").write_text("\n".join(lines) + "\n")
    if args.misses:
        args.misses.mkdir(parents=True, exist_ok=True)
        for mode in variants:
            (args.misses / f"{label}.{mode}.misses.jsonl").write_text(
                "".join(line + "\n" for line in misses[mode]), encoding="utf-8")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

