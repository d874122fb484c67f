"""Typed settings: defaults < TOML file < environment < command-line flags.

`settings.py` holds the records (frozen dataclasses with their bounds), `loading.py` builds
and validates them; callers import everything from here.
"""

from openmemd.config.loading import ENV_VARS, default_settings, describe, load_settings
from openmemd.config.settings import (
    DEFAULT_AGENT,
    PHASE_CHOICES,
    PHASES,
    SOURCES,
    AgentSettings,
    CacheSettings,
    ChunkingSettings,
    ContextSettings,
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
from openmemd.errors import ConfigError

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
