"""Hybrid search over the index: keyword leg (FTS5 BM25), vector leg (sqlite-vec KNN or numpy),
per-model score calibration, fusion, temporal decay, MMR, snippets.

Entry point: `openmemd.search.pipeline.run_search`. The keyword tokens it shares with the
indexer live in `openmemd.text.tokens`.
"""
