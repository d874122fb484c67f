"""Rows for the PostgreSQL store tests."""

from __future__ import annotations

import numpy as np

from openmemd.store.base import ChunkRow
from openmemd.text.tokens import fts_index_text


def unit(seed: int, dims: int = 8) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dims).astype(np.float32)
    return v / np.linalg.norm(v)


def row(cid: str, path: str, text: str, vector=None, model="m") -> ChunkRow:
    return ChunkRow(id=cid, path=path, source="memory", start_line=1, end_line=2, hash="h" + cid,
                    model=model, text=text, fts_text=fts_index_text(text), vector=vector,
                    updated_at=1)


def fill(store, docs):
    w = store.writer()
    with w.transaction():
        for path, chunks in docs.items():
            w.upsert_file(path, "memory", "fh", 1000, 10, 5, 7)
            w.replace_chunks(path, chunks)
    return w
