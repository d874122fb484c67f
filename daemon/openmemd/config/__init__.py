"""Typed settings: defaults < TOML file < environment < command-line flags.

`settings.py` holds the records (frozen dataclasses with their bounds), `loading.py` builds
and validates them, `locate.py` finds the files; callers import everything from here. The
records and the loader are imported on first use, so a command a running daemon answers (which
needs only `locate`) does not build them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from openmemd.config.locate import DEFAULT_AGENT, ENV_VARS, PHASE_CHOICES, PHASES, SOURCES
from openmemd.errors import ConfigError

if TYPE_CHECKING:
    from openmemd.config.loading import default_settings, describe, load_settings
    from openmemd.config.settings import (
        AgentSettings,
        CacheSettings,
        ChunkingSettings,
        ContextSettings,
        DashboardSettings,
        DeepPhaseSettings,
        DreamingSettings,
        EmbeddingSettings,
        HybridSettings,
        LightPhaseSettings,
        LogSettings,
        MmrSettings,
        QuerySettings,
        RemPhaseSettings,
        ServerSettings,
        Settings,
        StoreSettings,
        SyncSettings,
        TemporalDecaySettings,
    )
    from openmemd.config.store_url import index_location, redact_url

_LAZY = {"default_settings": "loading", "describe": "loading", "load_settings": "loading",
         "index_location": "store_url", "redact_url": "store_url"}

__all__ = [
    "DEFAULT_AGENT",
    "ENV_VARS",
    "PHASES",
    "PHASE_CHOICES",
    "SOURCES",
    "AgentSettings",
    "CacheSettings",
    "ChunkingSettings",
    "ConfigError",
    "ContextSettings",
    "DashboardSettings",
    "DeepPhaseSettings",
    "DreamingSettings",
    "EmbeddingSettings",
    "HybridSettings",
    "LightPhaseSettings",
    "LogSettings",
    "MmrSettings",
    "QuerySettings",
    "RemPhaseSettings",
    "ServerSettings",
    "Settings",
    "StoreSettings",
    "SyncSettings",
    "TemporalDecaySettings",
    "default_settings",
    "describe",
    "index_location",
    "load_settings",
    "redact_url",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'openmemd.config' has no attribute {name!r}")
    module = importlib.import_module(f"openmemd.config.{_LAZY.get(name, 'settings')}")
    value = getattr(module, name)
    globals()[name] = value  # looked up once
    return value
