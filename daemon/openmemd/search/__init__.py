"""Hybrid search over the index: keyword leg (relevance with term coverage), vector leg
(cosine), per-model score calibration, fusion, temporal decay, MMR, snippets.

Candidates and raw measurements come from the store (`store.base.StoreReader`); everything
here is scoring and fusion, the same for every backend.

Entry point: `openmemd.search.pipeline.run_search`. The keyword tokens it shares with the
indexer live in `openmemd.text.tokens`.
"""
