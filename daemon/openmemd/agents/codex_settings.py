"""Codex's settings: openmemd's MCP server as `[mcp_servers.openmemd]` in
`$CODEX_HOME/config.toml` (else `~/.codex/config.toml`), the file's comments and order kept."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit

from openmemd.agents.formats import dump_toml, load_toml, plain
from openmemd.agents.safe_edit import EditError, FileState
from openmemd.agents.sources_setting import SourcesEdit
from openmemd.agents.wiring import SERVER_NAME, Edit, Wiring, home

NAME = "codex"


def config_file(env: Mapping[str, str]) -> Path:
    base = env.get("CODEX_HOME")
    return (Path(base).expanduser() if base else home(env) / ".codex") / "config.toml"


def edits(wiring: Wiring) -> list[Edit]:
    return [SourcesEdit(wiring.config_file, NAME, wiring.sources),
            McpServerTable(config_file(wiring.env), server_entry(wiring.mcp_command))]


def server_entry(command: list[str]) -> dict[str, Any]:
    return {"command": command[0], "args": command[1:]}


@dataclass(frozen=True)
class McpServerTable:
    path: Path
    entry: dict[str, Any]
    name: str = "mcp-server"

    def add(self, state: FileState) -> tuple[bytes, dict[str, Any]] | None:
        doc = load_toml(state)
        servers = doc.get("mcp_servers")
        if servers is not None and not isinstance(servers, dict):
            raise EditError(f"{self.path}: 'mcp_servers' is not a table; left untouched")
        previous = plain(servers.get(SERVER_NAME)) if servers is not None else None
        if previous == self.entry:
            return None
        if servers is None:
            servers = tomlkit.table(is_super_table=True)  # only [mcp_servers.openmemd] shows
            doc["mcp_servers"] = servers
        table = tomlkit.table()
        for key, value in self.entry.items():
            table[key] = value
        table.add(tomlkit.nl())  # a blank line before whatever table follows
        servers[SERVER_NAME] = table
        return dump_toml(doc, state), {"entry": self.entry, "previous": previous,
                                       "createdTable": "mcp_servers" not in load_toml(state)}

    def remove(self, state: FileState, added: Mapping[str, Any]) -> bytes | None:
        doc = load_toml(state)
        servers = doc.get("mcp_servers")
        if not isinstance(servers, dict) or plain(servers.get(SERVER_NAME)) != added["entry"]:
            return None  # gone, or changed by hand since: the user's now
        if added.get("previous") is not None:
            servers[SERVER_NAME] = added["previous"]
        else:
            del servers[SERVER_NAME]
            if not servers and added.get("createdTable"):
                del doc["mcp_servers"]
        return dump_toml(doc, state)
