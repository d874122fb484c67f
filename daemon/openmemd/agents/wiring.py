"""What `openmemd connect` writes into an agent's settings, and the one interface every
agent's module implements: a list of edits, each adding openmemd to one file and removing
exactly what it added."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from openmemd.agents.safe_edit import FileState

SERVER_NAME = "openmemd"  # the MCP server's name in every agent's settings


@dataclass(frozen=True)
class Wiring:
    """How this openmemd is reached: its MCP server's and its startup hook's command lines
    (absolute paths), its own config file, its sources now, the environment (agents' homes)."""

    mcp_command: list[str]
    hook_command: list[str]
    config_file: Path
    sources: list[str]
    env: Mapping[str, str]


class Edit(Protocol):
    """One file of one agent: `add` gives the new bytes and what was added (None: nothing to
    change), `remove` the bytes without what `add` recorded (None: nothing of it is left)."""

    @property
    def name(self) -> str: ...

    @property
    def path(self) -> Path: ...

    def add(self, state: FileState) -> tuple[bytes, dict[str, Any]] | None: ...

    def remove(self, state: FileState, added: Mapping[str, Any]) -> bytes | None: ...


def home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home()).expanduser()
