"""What a sync reports, and where its vectors come from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openmemd.embed.base import EmbeddingProvider
from openmemd.embed.pool import EmbeddingPool
from openmemd.index.scan import ScanIssue
from openmemd.progress import Progress
from openmemd.store.base import FTS_ONLY_MODEL, CacheKey

__all__ = ["FTS_ONLY_MODEL", "Progress", "SyncReport", "VectorTarget"]



@dataclass
class SyncReport:
    scanned: int = 0
    indexed: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks: int = 0
    vectors_embedded: int = 0
    vectors_from_cache: int = 0
    vectors_pending: int = 0
    reindexed: bool = False
    seconds: float = 0.0
    skipped: list[ScanIssue] = field(default_factory=list)
    warnings: list[ScanIssue] = field(default_factory=list)
    # symlinked notes and folders, not followed: left out, like skipped files, but not scanned
    links: list[ScanIssue] = field(default_factory=list)

    @property
    def rows_written(self) -> int:
        """Chunks and vectors written: how much the index changed."""
        return self.chunks + self.vectors_embedded + self.vectors_from_cache

    def merge(self, other: SyncReport) -> None:
        for name in ("scanned", "indexed", "unchanged", "deleted", "chunks", "vectors_embedded",
                     "vectors_from_cache"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.vectors_pending = other.vectors_pending
        self.skipped += other.skipped
        self.warnings += other.warnings
        self.links = other.links or self.links  # a targeted sync walks nothing

    def to_dict(self) -> dict[str, Any]:
        return {
            "scanned": self.scanned, "indexed": self.indexed, "unchanged": self.unchanged,
            "deleted": self.deleted, "chunks": self.chunks,
            "vectorsEmbedded": self.vectors_embedded, "vectorsFromCache": self.vectors_from_cache,
            "vectorsPending": self.vectors_pending, "reindexed": self.reindexed,
            "seconds": round(self.seconds, 3),
            "skipped": [{"path": i.path, "reason": i.reason} for i in self.skipped],
            "warnings": [{"path": i.path, "reason": i.reason} for i in self.warnings],
        } | ({"notFollowed": [{"path": i.path, "reason": i.reason} for i in self.links]}
             if self.links else {})


@dataclass(frozen=True)
class VectorTarget:
    """Where vectors come from and how they are keyed in the cache."""

    provider: EmbeddingProvider
    pool: EmbeddingPool
    cache_enabled: bool
    batch_size: int

    @property
    def model(self) -> str:
        return self.provider.model

    @property
    def cache_key(self) -> CacheKey:
        """Which embedding function made a cached vector: provider id, model, provider key."""
        p = self.provider
        return CacheKey(p.id, p.model, p.provider_key)
