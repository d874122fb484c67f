"""Hybrid search over the index: keyword leg (FTS5 BM25), vector leg (sqlite-vec KNN or numpy),
per-model score calibration, fusion, temporal decay, MMR, snippets.

Entry point: `openmemd.search.pipeline.run_search`; the indexer uses
`openmemd.text.tokens.fts_index_text`. Nothing is imported here, so the indexer's import of
`tokens` stays light.
"""
