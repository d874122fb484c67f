#!/usr/bin/env python3
"""First-pass vectors from a static model shipped in its wheel, against keyword-only search.

    pip install wordllama     # into the bench's venv only: it is not a dependency of openmemd
    python bench/first_pass.py /path/to/eval/locomo-dev [--limit N] [--state-dir DIR]

The question (issue 28, item 6): while e5 has not embedded a chunk yet, search is keyword-only
for it. Would a static embedding model -- `wordllama` (l2_supercat, 256 dims, 16 MB of float16
weights and the Llama-2 tokenizer inside its ~19 MB wheel) -- give every chunk a useful vector
in seconds? Adopted only if hybrid search over its vectors gains >= 0.03 hit@5 over
keyword-only at <= 5 % of e5's embedding time.

Each workspace is indexed keyword-only (provider "none": openmemd's real chunking, keyword rows
and BM25). Every question is then searched twice through the real pipeline (`run_search`):
(a) keyword-only, exactly as `MemoryIndex.search` without a provider, and (b) hybrid with the
same keyword leg plus a vector leg over wordllama vectors of the same chunk texts, fused as
openmemd's default hybrid (weighted 0.7 / 0.3, missing leg scores looked up). The vectors are
held here and answered through the store's reader interface (`vector_candidates`, `cosines`),
which is what a second vector column would answer; the calibration is registered the way a
model's row in `search.scoring.MODEL_CALIBRATIONS` would be. Search filters (sources, derived
files) do not apply to the vector leg here: the eval workspaces have neither.

The calibration (cosine "unrelated" -> 0, "related" -> 1) comes from hand-written pairs below,
not from the eval sets; the script prints their levels, and the levels on the eval set itself
(median cosine of each question to its answering chunk and to all chunks) as a check.

Embedding time: wordllama over every chunk, against e5 (openmemd's local provider, the default
model) on `--e5-sample` chunks spread over the set, scaled to all chunks. Model loading is timed
apart. The weights and tokenizer are read straight from the wheel's files: `WordLlama.load()`
looks for the tokenizer in `wordllama/tokenizer/` while the wheel ships it in `tokenizers/`, so
it would fetch it from the Hugging Face hub (or fail with `disable_download=True`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))

from openmemd.api import MemoryIndex
from openmemd.embed.local import load_local_model
from openmemd.search import scoring
from openmemd.search.pipeline import run_search
from openmemd.store.base import CandidateFilter, ChunkRow, MeasuredChunk, StoreReader
from quality import _load_scorer, _matches, score, settings_for, workspace_root

MODEL = "wordllama-l2-supercat-256"
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
THRESHOLD_GAIN = 0.03  # hit@5 over keyword-only
THRESHOLD_TIME = 0.05  # share of e5's embedding time

# (question, passage answering it, unrelated passage): none from the eval sets.
CALIBRATION_PAIRS = {
    "en": [
        ("What did the user decide about the database migration?",
         "We agreed to move the orders table to PostgreSQL next sprint and keep SQLite for tests.",
         "Grandma's apple pie needs six apples, cinnamon and a cold butter crust."),
        ("Which city is Alice moving to?",
         "Alice told me she accepted the job offer and will relocate to Lisbon in March.",
         "The printer on the third floor jams when the paper tray is overfilled."),
        ("When is the dentist appointment?",
         "Reminder: dentist appointment on Tuesday at 9:30, bring the insurance card.",
         "The quarterly report shows revenue grew by twelve percent in Europe."),
        ("What hobby did Jon pick up recently?",
         "Jon has started rock climbing at the indoor gym twice a week since May.",
         "Set the thermostat to 19 degrees before leaving for the weekend."),
        ("How do I restart the web server?",
         "To restart nginx run sudo systemctl restart nginx and check the status afterwards.",
         "Her favourite novel is a story about a lighthouse keeper on a remote island."),
    ],
    "zh": [
        ("会议改到哪一天了？", "原定周三的项目评审会议改到下周一上午十点举行。",
         "这道菜需要先把土豆切丝，再用大火快炒两分钟。"),
        ("小王最近在学什么乐器？", "小王从上个月开始跟老师学习吉他，每周练习三次。",
         "服务器的磁盘快满了，需要清理旧的日志文件。"),
        ("数据库迁移的结论是什么？", "大家同意下个迭代把订单表迁移到PostgreSQL，测试仍用SQLite。",
         "春天的西湖边开满了桃花，游客很多。"),
    ],
}
# From the English pairs (measured: unrelated -0.08..0.02, mean ~0.0; related 0.30..0.64, mean
# ~0.45). The Chinese pairs sit at 0.43..0.49 unrelated and 0.55..0.66 related: the Llama-2
# tokenizer splits Chinese into single characters and bytes, so any two Chinese texts look
# alike. `--calibration 0.46,0.62` tries the Chinese levels instead.
DEFAULT_CALIBRATION = scoring.Calibration(0.0, 0.45)


def load_wordllama() -> Any:
    """wordllama's inference object, from the wheel's own files (see the module docstring)."""
    try:
        import wordllama
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference
    except ImportError:
        raise SystemExit("wordllama is not installed: pip install wordllama") from None
    package = Path(wordllama.__file__).parent
    with safe_open(str(package / WEIGHTS), framework="np") as f:
        matrix = f.get_tensor("embedding.weight")
    return WordLlamaInference(matrix, Tokenizer.from_file(str(package / TOKENIZER)))


def embed(model: Any, texts: Sequence[str]) -> NDArray[np.float32]:
    """Unit vectors, one row per text."""
    return np.asarray(model.embed(list(texts), norm=True), dtype=np.float32)


class FirstPassReader:
    """The store's reader, with the vector calls answered from first-pass vectors held here."""

    def __init__(self, reader: StoreReader, rows: list[ChunkRow],
                 vectors: NDArray[np.float32]) -> None:
        self._reader = reader
        self._rows = rows
        self._vectors = vectors
        self._position = {row.id: i for i, row in enumerate(rows)}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)

    def vector_candidates(self, query: NDArray[np.float32], *, limit: int,
                          where: CandidateFilter) -> list[MeasuredChunk]:
        sims = self._vectors @ query
        best = sorted(range(len(sims)), key=lambda i: (-sims[i], self._rows[i].id))[:limit]
        return [MeasuredChunk(r.id, r.path, r.source, r.start_line, r.end_line, r.text,
                              float(sims[i])) for i in best for r in (self._rows[i],)]

    def cosines(self, query: NDArray[np.float32], ids: Sequence[str], *,
                model: str) -> dict[str, float]:
        return {i: float(self._vectors[self._position[i]] @ query)
                for i in ids if i in self._position}


def pair_levels(model: Any) -> None:
    for lang, pairs in CALIBRATION_PAIRS.items():
        q = embed(model, [p[0] for p in pairs])
        related = np.sum(q * embed(model, [p[1] for p in pairs]), axis=1)
        unrelated = np.sum(q * embed(model, [p[2] for p in pairs]), axis=1)
        print(f"  calibration pairs ({lang}): related {related.min():.2f}..{related.max():.2f} "
              f"(mean {related.mean():.2f}), unrelated {unrelated.min():.2f}.."
              f"{unrelated.max():.2f} (mean {unrelated.mean():.2f})")


def e5_seconds_per_chunk(texts: list[str]) -> float:
    provider = load_local_model("")
    provider.embed_documents(["warm up"])  # loads and checks the model: not embedding time
    started = time.monotonic()
    provider.embed_documents(texts)
    return (time.monotonic() - started) / len(texts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--state-dir", type=Path, default=None,
                    help="keyword-only indexes (default: a temp dir)")
    ap.add_argument("--limit", type=int, default=0, help="first N questions only")
    ap.add_argument("--e5-sample", type=int, default=20, help="chunks e5 embeds for its time")
    ap.add_argument("--calibration", default="",
                    help="UNRELATED,RELATED cosine levels (default: from the English pairs)")
    args = ap.parse_args(argv)

    calibration = DEFAULT_CALIBRATION
    if args.calibration:
        low, high = (float(x) for x in args.calibration.split(","))
        calibration = scoring.Calibration(low, high)
    # What adopting the model would add to the per-model calibration table.
    scoring.MODEL_CALIBRATIONS = ((re.compile("wordllama"), calibration),
                                  *scoring.MODEL_CALIBRATIONS)

    dataset = args.dataset.resolve()
    queries = [json.loads(line) for line in
               (dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
    if args.limit:
        queries = queries[: args.limit]
    by_workspace: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in queries:
        by_workspace[q["workspace"]].append(q)
    scorer = _load_scorer(dataset)
    tmp = tempfile.TemporaryDirectory(prefix="openmemd-first-pass-")
    state = args.state_dir.resolve() if args.state_dir else Path(tmp.name)

    started = time.monotonic()
    model = load_wordllama()
    load_s = time.monotonic() - started
    print(f"{dataset.name}: {len(queries)} questions in {len(by_workspace)} workspace(s); "
          f"wordllama loaded in {load_s:.2f}s; calibration {calibration.unrelated:.2f} -> 0, "
          f"{calibration.related:.2f} -> 1")
    pair_levels(model)

    modes = ("keyword-only", "first-pass hybrid")
    totals: dict[str, dict[str, float]] = {m: defaultdict(float) for m in modes}
    gained = lost = 0
    answering: list[float] = []
    typical: list[float] = []
    all_rows: list[ChunkRow] = []
    wordllama_s = 0.0
    for name, qs in by_workspace.items():
        root = workspace_root(dataset, name, state)
        index_state = state / "state" / dataset.name / name.replace("/", "_") / "fts"
        settings = settings_for(index_state, root, "keyword", "")
        with MemoryIndex.open(root, config=settings) as index:
            index.sync()
            reader = index.store.reader()
            rows = list(reader.export_chunks())
            started = time.monotonic()
            vectors = embed(model, [r.text for r in rows])
            wordllama_s += time.monotonic() - started
            all_rows += rows
            first_pass = FirstPassReader(reader, rows, vectors)
            for q in qs:
                keyword_hits = index.search(q["query"], max_results=10, min_score=0.0,
                                            record=False)
                query_vector = embed(model, [q["query"]])[0]
                hybrid_hits = run_search(first_pass, q["query"], query_vector=query_vector,
                                         model=MODEL, settings=settings.query, max_results=10,
                                         min_score=0.0, sources=None, now=time.time())
                hit5 = {}
                for mode, hits in zip(modes, (keyword_hits, hybrid_hits), strict=True):
                    results = [{"path": h.path, "start_line": h.start_line,
                                "end_line": h.end_line} for h in hits]
                    scores = score(scorer, results, q)
                    for key, value in scores.items():
                        totals[mode][key] += value
                    hit5[mode] = scores["hit@5"]
                gained += hit5[modes[1]] > hit5[modes[0]]
                lost += hit5[modes[1]] < hit5[modes[0]]
                sims = vectors @ query_vector
                own = [float(sims[i]) for i, r in enumerate(rows)
                       if any(_matches({"path": r.path, "start_line": r.start_line,
                                        "end_line": r.end_line}, span)
                              for span in q["relevant"])]
                if own:
                    answering.append(max(own))
                typical.append(float(np.median(sims)))

    n = len(queries)
    print(f"  eval-set levels: question vs its answering chunk median "
          f"{np.median(answering):.2f}, vs all chunks median {np.median(typical):.2f}")
    keys = ["hit@1", "hit@5", "hit@10", "ndcg@10"]
    print(f"\n{'mode':20s}" + "".join(f"{k:>9s}" for k in keys))
    for mode in modes:
        print(f"{mode:20s}" + "".join(f"{totals[mode][k] / n:9.4f}" for k in keys))
    gain = (totals[modes[1]]["hit@5"] - totals[modes[0]]["hit@5"]) / n
    print(f"hit@5 gain {gain:+.4f} ({gained} questions gained a hit in the top 5, {lost} lost)")

    sample = [all_rows[i * len(all_rows) // args.e5_sample] for i in range(args.e5_sample)]
    e5_per_chunk = e5_seconds_per_chunk([r.text for r in sample])
    e5_all = e5_per_chunk * len(all_rows)
    share = wordllama_s / e5_all
    mean_all = sum(len(r.text) for r in all_rows) / len(all_rows)
    mean_sample = sum(len(r.text) for r in sample) / len(sample)
    print(f"\nembedding {len(all_rows)} chunks (mean {mean_all:.0f} chars): wordllama "
          f"{wordllama_s:.2f}s ({len(all_rows) / wordllama_s:.0f} chunks/s); e5 "
          f"{1 / e5_per_chunk:.2f} chunks/s on {len(sample)} chunks (mean {mean_sample:.0f} "
          f"chars), so ~{e5_all:.0f}s for all: wordllama takes {100 * share:.2f} % of e5's time")
    adopt = gain >= THRESHOLD_GAIN and share <= THRESHOLD_TIME
    print(f"rule (gain >= {THRESHOLD_GAIN} hit@5 at <= {100 * THRESHOLD_TIME:.0f} % of e5's "
          f"time): {'met' if adopt else 'not met'} on {dataset.name}")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
