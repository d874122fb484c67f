"""Vector leg: the store's nearest chunks by cosine similarity, as leg hits.

The query vector is normalised once (`normalise_query`, by the pipeline); the store compares
that unit vector with its own (`StoreReader.vector_candidates` / `cosines`) and returns raw
cosines, which the pipeline calibrates per model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from openmemd.search.results import LegHit
from openmemd.store.base import CandidateFilter, StoreReader


def normalise_query(vector: ArrayLike | None) -> NDArray[np.float32] | None:
    """float32 unit vector, or None for an empty, zero or non-finite vector."""
    if vector is None:
        return None
    q = np.asarray(vector, dtype=np.float32).reshape(-1)
    if q.size == 0 or not np.all(np.isfinite(q)):
        return None
    norm = float(np.linalg.norm(q))
    if norm == 0.0:
        return None
    return q / norm


def vector_search(reader: StoreReader, q: NDArray[np.float32] | None, *, model: str, limit: int,
                  sources: Sequence[str] | None = None,
                  skip_derived: bool = False) -> list[LegHit]:
    """The `limit` chunks of `model` most similar to the unit vector `q` (from
    `normalise_query`; None finds nothing), best first (score = raw = cosine)."""
    if q is None or limit <= 0:
        return []
    where = CandidateFilter(sources=tuple(sources) if sources else None, model=model,
                            skip_derived=skip_derived)
    return [LegHit(id=c.id, path=c.path, source=c.source, start_line=c.start_line,
                   end_line=c.end_line, text=c.text, score=c.measure, raw=c.measure,
                   namespace=c.namespace)
            for c in reader.vector_candidates(q, limit=limit, where=where)]
