"""Typed settings: defaults < TOML file < environment < command-line flags.

`settings.py` holds the records (frozen dataclasses with their bounds); everything is imported
from here.
"""

from openmemd.config.settings import (
    DEFAULT_AGENT,
    ENV_VARS,
    SOURCES,
    AgentSettings,
    CacheSettings,
    ChunkingSettings,
    ConfigError,
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
    SyncSettings,
    TemporalDecaySettings,
    default_settings,
    describe,
    load_settings,
)

__all__ = [
    "DEFAULT_AGENT", "ENV_VARS", "SOURCES", "AgentSettings", "CacheSettings", "ChunkingSettings",
    "ConfigError", "DeepPhaseSettings", "DreamingSettings", "EmbeddingSettings",
    "HybridSettings", "LightPhaseSettings", "LogSettings", "MmrSettings", "QuerySettings",
    "RemPhaseSettings", "ServerSettings", "Settings", "SyncSettings", "TemporalDecaySettings",
    "default_settings", "describe", "load_settings",
]
