"""Process-wide embedding state: one provider and pool per setting (a model is loaded once,
whatever the number of indexes), the query-vector LRU, and the provider's health.

A remote provider can be down for minutes: then the index keeps its keyword rows, searches
run keyword-only, and the daemon retries the vectors (see `ProviderHealth`).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from openmemd.config import EmbeddingSettings, Settings
from openmemd.embed.base import EmbeddingProvider
from openmemd.log import get_logger

if TYPE_CHECKING:
    from openmemd.embed.pool import EmbeddingPool
    from openmemd.embed.registry import ProviderChoice

log = get_logger(__name__)

# One provider (and one pool) per embedding settings, shared by every index in the process.
_providers: dict[EmbeddingSettings, ProviderChoice] = {}
_pools: dict[EmbeddingSettings, EmbeddingPool] = {}
_providers_lock = threading.Lock()
# After a failure, searches skip the query embedding this long instead of waiting on a
# provider that is down (the daemon's retries find out when it is back).
QUERY_SKIP_SECONDS = 5.0


def provider_for(settings: Settings) -> ProviderChoice:
    from openmemd.embed.registry import resolve_provider

    key = settings.embedding
    with _providers_lock:
        if key not in _providers:
            _providers[key] = resolve_provider(settings.embedding)
        return _providers[key]


def batch_size(settings: Settings, provider: EmbeddingProvider) -> int:
    preferred: int = getattr(provider, "preferred_batch_size", 16)
    return settings.embedding.batch_size or preferred


def pool_for(settings: Settings, provider: EmbeddingProvider) -> EmbeddingPool:
    from openmemd.embed.pool import EmbeddingPool

    key = settings.embedding
    with _providers_lock:
        if key not in _pools:
            _pools[key] = EmbeddingPool(provider, workers=settings.embedding.workers,
                                        batch_size=batch_size(settings, provider),
                                        max_pending=4)
        return _pools[key]


class QueryVectors:
    """A small LRU of query embeddings: agents repeat queries, and embedding costs ms."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, provider: EmbeddingProvider, query: str) -> np.ndarray:
        key = f"{provider.provider_key}\x00{query}"
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        vector = provider.embed_query(query)
        with self._lock:
            self._items[key] = vector
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return vector


class ProviderHealth:
    """Whether the embedding provider answered last time, and since when it has not."""

    def __init__(self) -> None:
        self.error = ""  # the provider's last error ('' while it answers)
        self.since: float | None = None
        self._failed_mono = 0.0

    @property
    def problem(self) -> str:
        return f"embedding provider unavailable: {self.error}" if self.error else ""

    def failed(self, exc: BaseException) -> str:
        if not self.error:  # logged once per outage, not once per retry
            log.warning("embedding_provider_unavailable", error=str(exc), in_reply=True)
            self.since = time.time()
        self.error = str(exc)
        self._failed_mono = time.monotonic()
        return self.problem

    def recovered(self) -> None:
        if self.error:
            log.info("embedding_provider_back", down_since=self.since)
        self.error, self.since = "", None

    def skip_queries(self) -> bool:
        return bool(self.problem) and time.monotonic() - self._failed_mono < QUERY_SKIP_SECONDS
