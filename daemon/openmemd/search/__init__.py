"""Hybrid search over the index: keyword leg (relevance with term coverage), vector leg
(cosine), per-model score calibration, fusion, temporal decay, MMR, snippets.

Candidates and raw measurements come from the store (`store.base.StoreReader`); everything
here is scoring and fusion, the same for every backend.

Entry point: `openmemd.search.pipeline.search_outcome` (hits, and the nearest miss when none
passed; `run_search` returns the hits alone). Whether anything passes at all is `evidence.py`;
which lines of a hit answer, `focus.py`. The keyword tokens it shares with the
indexer live in `openmemd.text.tokens`.
"""
