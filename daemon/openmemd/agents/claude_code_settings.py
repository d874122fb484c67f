"""Claude Code's settings: openmemd's MCP server in the user-scope `mcpServers` of
`.claude.json`, and a `SessionStart` hook in `settings.json` that prints the startup context.
Both files live in `$CLAUDE_CONFIG_DIR` when it is set (as Claude Code 2.x itself does:
`claude mcp add -s user` writes `$CLAUDE_CONFIG_DIR/.claude.json`), else `~/.claude.json` and
`~/.claude/settings.json`."""

from __future__ import annotations

import copy
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmemd.agents.formats import dump_json, load_json
from openmemd.agents.safe_edit import EditError, FileState
from openmemd.agents.sources_setting import SourcesEdit
from openmemd.agents.wiring import SERVER_NAME, Edit, Wiring, home

NAME = "claude-code"
HOOK_EVENT = "SessionStart"
HOOK_MATCHER = "startup|resume|clear|compact"  # a regex over the session's `source`
HOOK_TIMEOUT_S = 10  # the hook fails open well before Claude Code's 60 s default


def config_dir(env: Mapping[str, str]) -> Path | None:
    value = env.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() if value else None


def state_file(env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps user-scope MCP servers."""
    base = config_dir(env)
    return base / ".claude.json" if base else home(env) / ".claude.json"


def settings_file(env: Mapping[str, str]) -> Path:
    base = config_dir(env)
    return (base or home(env) / ".claude") / "settings.json"


def edits(wiring: Wiring) -> list[Edit]:
    return [SourcesEdit(wiring.config_file, NAME, wiring.sources),
            McpServerEdit(state_file(wiring.env), server_entry(wiring.mcp_command)),
            HookEdit(settings_file(wiring.env), hook_group(wiring.hook_command))]


def server_entry(command: list[str]) -> dict[str, Any]:
    return {"type": "stdio", "command": command[0], "args": command[1:], "env": {}}


def hook_group(command: list[str]) -> dict[str, Any]:
    return {"matcher": HOOK_MATCHER, "hooks": [{"type": "command", "command": shlex.join(
        command), "timeout": HOOK_TIMEOUT_S}]}


def _table(doc: dict[str, Any], key: str, kind: type, path: Path) -> Any:
    value = doc.get(key)
    if value is not None and not isinstance(value, kind):
        raise EditError(f"{path}: '{key}' is not a JSON {'object' if kind is dict else 'array'}"
                        "; left untouched")
    return value


@dataclass(frozen=True)
class McpServerEdit:
    path: Path
    entry: dict[str, Any]
    name: str = "mcp-server"

    def add(self, state: FileState) -> tuple[bytes, dict[str, Any]] | None:
        doc = load_json(state)
        servers = _table(doc, "mcpServers", dict, self.path)
        previous = (servers or {}).get(SERVER_NAME)
        if previous == self.entry:
            return None
        doc.setdefault("mcpServers", {})[SERVER_NAME] = copy.deepcopy(self.entry)
        return dump_json(doc, state), {"entry": self.entry, "previous": previous,
                                       "createdTable": servers is None}

    def remove(self, state: FileState, added: Mapping[str, Any]) -> bytes | None:
        doc = load_json(state)
        servers = _table(doc, "mcpServers", dict, self.path)
        if not servers or servers.get(SERVER_NAME) != added["entry"]:
            return None  # gone, or changed by hand since: the user's now
        if added.get("previous") is not None:
            servers[SERVER_NAME] = added["previous"]
        else:
            del servers[SERVER_NAME]
            if not servers and added.get("createdTable"):
                del doc["mcpServers"]
        return dump_json(doc, state)


@dataclass(frozen=True)
class HookEdit:
    path: Path
    group: dict[str, Any]
    name: str = "session-start-hook"

    def add(self, state: FileState) -> tuple[bytes, dict[str, Any]] | None:
        doc = load_json(state)
        hooks = _table(doc, "hooks", dict, self.path)
        groups = _table(hooks or {}, HOOK_EVENT, list, self.path)
        if any(g == self.group for g in groups or []):
            return None
        doc.setdefault("hooks", {}).setdefault(HOOK_EVENT, []).append(copy.deepcopy(self.group))
        return dump_json(doc, state), {"group": self.group, "createdHooks": hooks is None,
                                       "createdEvent": groups is None}

    def remove(self, state: FileState, added: Mapping[str, Any]) -> bytes | None:
        doc = load_json(state)
        hooks = _table(doc, "hooks", dict, self.path)
        groups = _table(hooks or {}, HOOK_EVENT, list, self.path)
        if not hooks or not groups or added["group"] not in groups:
            return None
        groups.remove(added["group"])
        if not groups and added.get("createdEvent"):
            del hooks[HOOK_EVENT]
        if not hooks and added.get("createdHooks"):
            del doc["hooks"]
        return dump_json(doc, state)
