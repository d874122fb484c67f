"""Embedding providers (local model, OpenAI-compatible HTTP, none), cache and worker pool.

Only the light-weight contracts are imported here; providers load on demand through
`openmemd.embed.registry`.
"""

from openmemd.embed.base import EmbeddingError, EmbeddingProvider, ProviderUnavailable

__all__ = ["EmbeddingError", "EmbeddingProvider", "ProviderUnavailable"]
