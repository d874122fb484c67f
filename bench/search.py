#!/usr/bin/env python3
"""Search latency in process at 10k and 100k chunks (synthetic text and vectors), and the daemon.

    python bench/search.py [--sizes 10000,100000] [--queries 50] [--work-dir DIR] [--no-daemon]
                           [--results FILE]

For each size, a real index database (the openmemd schema: chunks, FTS5, sqlite-vec) is filled
with Zipf-distributed pseudo-words (~1,000 characters a chunk) and random unit vectors (384
dims, like e5-small), then natural-language-like queries are run through the pipeline. The real
model embeds each query as the daemon does (`embed.local.E5Provider`; its time is reported on
its own line). Printed per size, p50 and p95 in milliseconds of:

  search            what a user waits for in process, per query: its embedding (`embed query`)
                    plus its hybrid search (`hybrid`), each query's first search (SQLite's own
                    cache does not hold its keyword rows yet, as in the daemon)
  hybrid            run_search as the daemon runs it: keyword leg + vector leg from the
                    resident matrix (store/sqlite/resident.py) + fusion (query vector given)
  hybrid+mmr        the same with MMR and temporal decay on
  hybrid sqlite-vec run_search with the vector leg from sqlite-vec KNN (a one-shot CLI search)
  keyword-only      run_search without a vector (FTS5 + lexical boosts)
  vector resident   the vector leg alone, resident matrix
  vector knn        the vector leg alone, sqlite-vec `MATCH ... AND k = ?`
  vector numpy      the vector leg alone without sqlite-vec: the resident matrix filled from
                    the JSON copy in `chunks.embedding`
  numpy floor       brute force over the same vectors already in memory (M @ q + argpartition),
                    the floor any exact vector search pays
  after an edit     the vector leg right after a file's chunks were rewritten (the change is
                    applied to the resident matrix as a delta; found first, asserted)
  embed query       the real model embedding one query

and the ratio of hybrid to its floor, both with the query's embedding: (hybrid + embed query) /
(numpy floor + embed query). `--results FILE` keeps the hybrid results (ids, scores) of every
query: written when FILE does not exist, else compared, and any difference fails the run (a
speed-up must not move the results).

Then, for the largest size, the real daemon is started on an index holding those chunks (plus
the workspace's own note) and its RSS read after searches over the socket, compared with the
in-process `search` row of the same run, with edit → searchable through the watcher (skip with
--no-daemon; see bench/search_daemon.py).

Databases are kept in --work-dir (default: a temp dir) so a second run skips building them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))

from openmemd.config import MmrSettings, QuerySettings, TemporalDecaySettings
from openmemd.search.pipeline import run_search
from openmemd.search.vector import normalise_query, vector_search
from openmemd.store.sqlite import db, queries, resident, schema, vec_storage
from openmemd.store.sqlite.reader import SqliteReader
from openmemd.text import tokens

DIMS = 384
MODEL = "e5-small-multilingual"
SEED = 7


def vocabulary(n: int, rng: np.random.Generator) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "sur", "ta", "vin", "pe", "ro", "gul", "da", "shi",
                 "ber", "an", "tol", "xe", "qui", "mo", "fa", "len"]
    words = set()
    while len(words) < n:
        k = int(rng.integers(2, 5))
        words.add("".join(rng.choice(syllables, size=k)))
    return sorted(words)


def zipf_indices(rng: np.random.Generator, n_vocab: int, size: int) -> np.ndarray:
    return np.minimum(rng.zipf(1.15, size=size) - 1, n_vocab - 1)


def build(path: Path, n: int, chars: int) -> None:
    rng = np.random.default_rng(SEED)
    vocab = vocabulary(20_000, rng)
    conn, vec = db.connect(path)
    if not vec.available:
        raise SystemExit(f"sqlite-vec unavailable: {vec.reason}")
    schema.ensure_schema(conn)
    schema.ensure_vec_table(conn, DIMS)
    words_per_chunk = max(8, chars // 7)
    started = time.monotonic()
    conn.execute("BEGIN")
    for start in range(0, n, 1000):
        m = min(1000, n - start)
        vectors = rng.standard_normal((m, DIMS)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        ids = zipf_indices(rng, len(vocab), m * words_per_chunk).reshape(m, words_per_chunk)
        for j in range(m):
            i = start + j
            text = " ".join(vocab[w] for w in ids[j])
            cid = f"c{i:07d}"
            path_ = f"memory/2024-{1 + i % 12:02d}-{1 + i % 28:02d}.md"
            conn.execute(
                "INSERT INTO chunks(id, path, source, start_line, end_line, hash, model, text, "
                "embedding, updated_at) VALUES (?, ?, 'memory', ?, ?, ?, ?, ?, ?, 0)",
                (cid, path_, 1 + i, 20 + i, cid, MODEL, text,
                 json.dumps(np.round(vectors[j], 5).tolist())))
            conn.execute(
                "INSERT INTO chunks_fts(text, id, path, source, model, start_line, end_line) "
                "VALUES (?, ?, ?, 'memory', ?, ?, ?)",
                (tokens.fts_index_text(text), cid, path_, MODEL, 1 + i, 20 + i))
            conn.execute("INSERT INTO chunks_vec(id, embedding) VALUES (?, ?)",
                         (cid, vectors[j].tobytes()))
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    print(f"  built {n} chunks in {time.monotonic() - started:.0f}s", flush=True)


def make_queries(count: int) -> list[str]:
    rng = np.random.default_rng(SEED)
    vocab = vocabulary(20_000, rng)  # same vocabulary as the chunks
    fillers = ["what", "did", "we", "decide", "about", "the", "when", "is", "how", "to"]
    out = []
    for _ in range(count):
        content = [vocab[int(i)] for i in rng.integers(20, 3000, size=int(rng.integers(2, 5)))]
        words = list(rng.choice(fillers, size=3)) + content
        out.append(" ".join(words) + "?")
    return out


def timed(fn: Callable[[], object], repeat: int = 1) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - started) * 1000 / repeat


def report(label: str, samples: list[float]) -> None:
    samples = sorted(samples)
    p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
    print(f"  {label:14s} p50 {statistics.median(samples):8.2f} ms   p95 {p95:8.2f} ms")


def knn_only(fn: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        resident.enable(False)
        try:
            return fn()
        finally:
            resident.enable(True)
    return run


def bench_size(path: Path, n: int, queries_: list[str], vectors: np.ndarray,
               embed_ms: list[float], results: Path | None) -> float:
    """Print the rows of one size; return the p50 of `search` (embedding + hybrid)."""
    upgrade, _ = db.connect(path)  # databases built before the change log existed get it
    schema.ensure_schema(upgrade)
    upgrade.close()
    conn, vec = db.connect(path, readonly=True)
    reader = SqliteReader(conn, vec, str(path))
    base = dict(model=MODEL, max_results=6, min_score=0.0, sources=None, now=time.time())
    units = [normalise_query(v) for v in vectors]  # what run_search hands the vector leg
    plain = QuerySettings()
    extras = QuerySettings(mmr=MmrSettings(enabled=True),
                           temporal_decay=TemporalDecaySettings(enabled=True))
    # Warm the page cache and the matrix filled from the JSON copy (loaded once per index).
    resident.forget()
    no_vec = SqliteReader(conn, db.VectorSupport(False), str(path))
    warm = timed(lambda: vector_search(no_vec, units[0], model=MODEL, limit=24))
    print(f"  (without sqlite-vec: the matrix read from the JSON copy in {warm:.0f} ms)")
    resident.enable()
    load = timed(lambda: vector_search(reader, units[0], model=MODEL, limit=24))
    print(f"  (resident matrix: loaded in {load:.0f} ms, once per daemon, in the background)")
    for q, v in zip(queries_[:3], vectors[:3], strict=True):
        run_search(reader, q, query_vector=v, settings=plain, **base)
    stored = vec_storage.read_vectors(conn, DIMS)  # the same vectors, for the floor
    assert stored is not None, "chunks_vec is not in the storage layout bench expects"
    matrix = np.vstack([v for _id, v in stored])
    rows: dict[str, list[float]] = {k: [] for k in (
        "search", "hybrid", "hybrid+mmr", "hybrid sqlite-vec", "keyword-only", "vector resident",
        "vector knn", "vector numpy", "numpy floor")}
    for i, (q, v, u) in enumerate(zip(queries_, vectors, units, strict=True)):
        rows["hybrid"].append(timed(lambda q=q, v=v: run_search(
            reader, q, query_vector=v, settings=plain, **base)))
        rows["search"].append(embed_ms[i] + rows["hybrid"][-1])
        rows["hybrid+mmr"].append(timed(lambda q=q, v=v: run_search(
            reader, q, query_vector=v, settings=extras, **base)))
        rows["hybrid sqlite-vec"].append(timed(knn_only(lambda q=q, v=v: run_search(
            reader, q, query_vector=v, settings=plain, **base))))
        rows["keyword-only"].append(timed(lambda q=q: run_search(
            reader, q, query_vector=None, settings=plain, **{**base, "model": "fts-only"})))
        rows["vector resident"].append(timed(lambda u=u: vector_search(
            reader, u, model=MODEL, limit=24)))
        rows["vector knn"].append(timed(knn_only(lambda u=u: vector_search(
            reader, u, model=MODEL, limit=24))))
        rows["vector numpy"].append(timed(lambda u=u: vector_search(
            no_vec, u, model=MODEL, limit=24)))
        rows["numpy floor"].append(timed(lambda v=v: np.argpartition(-(matrix @ v), 24)[:24]))
    rows["after an edit"] = edits(path, reader, units)
    print(f"{n} chunks:")
    for label, samples in rows.items():
        report(label, samples)
    floor, embed_p50 = statistics.median(rows["numpy floor"]), statistics.median(embed_ms)
    print(f"  hybrid / floor with the query embedding: ({statistics.median(rows['hybrid']):.1f}"
          f" + {embed_p50:.1f}) / ({floor:.1f} + {embed_p50:.1f}) = "
          f"{(statistics.median(rows['hybrid']) + embed_p50) / (floor + embed_p50):.2f}x "
          "(goal ≤ 2)")
    if results is not None:
        check_results(results, [run_search(reader, q, query_vector=v, settings=plain, **base)
                                for q, v in zip(queries_, vectors, strict=True)])
    m = resident.matrix_for(str(path), True)
    print(f"  (resident matrix: {m.full_loads} whole load(s), {m.deltas} delta(s))")
    conn.close()
    return statistics.median(rows["search"])


def check_results(path: Path, hits: list[list[Any]]) -> None:
    """Write the results of every query to `path`, or compare them with those it holds."""
    got = [[[h.id, h.score] for h in per_query] for per_query in hits]
    if not path.exists():
        path.write_text(json.dumps(got))
        print(f"  (hybrid results of {len(got)} queries written to {path})")
        return
    want = json.loads(path.read_text())
    differ = [i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b]
    if differ:
        raise SystemExit(f"hybrid results differ from {path} for {len(differ)} of {len(got)} "
                         f"queries (first: query {differ[0]}: {got[differ[0]]} != "
                         f"{want[differ[0]]})")
    print(f"  (hybrid results of {len(got)} queries identical to {path})")


def edits(path: Path, reader: SqliteReader, vectors: list[np.ndarray]) -> list[float]:
    """Rewrite one file's 3 chunks (as the indexer does, in one transaction), then time the
    next vector search, which must return the new chunk first."""
    writer, _ = db.connect(path)
    out = []
    rel = "memory/bench-edit.md"
    try:
        for i, v in enumerate(vectors[:20]):
            rows = [queries.SqliteChunkRow(
                id=f"edit-{i}-{j}", path=rel, source="memory", start_line=j, end_line=j,
                hash=f"e{i}{j}", model=MODEL, text=f"edited {i} {j}", fts_text=f"edited {i} {j}",
                embedding=json.dumps(v.tolist()), updated_at=0) for j in range(3)]
            with db.write_transaction(writer):
                queries.delete_chunks(writer, rel, vec=True)
                queries.insert_chunks(writer, rows)
                for r in rows:
                    writer.execute("INSERT INTO chunks_vec(id, embedding) VALUES (?, ?)",
                                   (r.id, np.asarray(v, np.float32).tobytes()))
            started = time.perf_counter()
            hits = vector_search(reader, v, model=MODEL, limit=24)
            out.append((time.perf_counter() - started) * 1000)
            assert hits[0].id.startswith(f"edit-{i}-"), hits[:1]
        with db.write_transaction(writer):
            queries.delete_chunks(writer, rel, vec=True)
    finally:
        writer.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--chars", type=int, default=1000, help="characters per synthetic chunk")
    ap.add_argument("--work-dir", type=Path, default=None)
    ap.add_argument("--no-daemon", action="store_true", help="skip the daemon RSS run")
    ap.add_argument("--results", type=Path, default=None,
                    help="hybrid results of the largest size: written if missing, else compared")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    tmp = None
    if args.work_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="openmemd-search-bench-")
        work = Path(tmp.name)
    else:
        work = args.work_dir
        work.mkdir(parents=True, exist_ok=True)

    queries = make_queries(args.queries)
    from openmemd.embed.local import E5Provider

    model = E5Provider()  # as the daemon embeds a query (its threads' settings too)
    model.embed_query("warm up")
    embed_ms, vectors = [], []
    for q in queries:
        started = time.perf_counter()
        vectors.append(np.asarray(model.embed_query(q), dtype=np.float32))
        embed_ms.append((time.perf_counter() - started) * 1000)
    print(f"{len(queries)} queries; real model (e5-small, as the daemon runs it) query embedding:")
    report("embed query", embed_ms)

    for n in sizes:
        path = work / f"bench-{n}-{args.chars}.sqlite"
        if not path.exists():
            print(f"building {n} chunks in {path} ...", flush=True)
            build(path, n, args.chars)
        in_process = bench_size(path, n, queries, np.vstack(vectors), embed_ms,
                                args.results if n == max(sizes) else None)
    if sizes and not args.no_daemon:
        import search_daemon

        search_daemon.run(work / f"bench-{max(sizes)}-{args.chars}.sqlite", work, queries,
                          in_process)
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
