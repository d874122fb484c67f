"""Claude Code and Codex as `status`, `doctor` and `config show` list them: each agent
connected (`openmemd connect` left its record in `<state>/connected/`) or whose source is on,
with its session files in the index and the newest one's mtime (the last write read)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from openmemd.agents.connection import record_file
from openmemd.config import Settings
from openmemd.errors import OpenmemdError
from openmemd.index.agent_sessions import AGENT_SOURCES, roots
from openmemd.protocol.status import ConnectedAgent
from openmemd.store.base import StoredFile


def agent_rows(settings: Settings, stored: Mapping[str, StoredFile]) -> tuple[ConnectedAgent, ...]:
    """One row per agent connected or read, counted from the index's files (`stored`)."""
    state = settings.state_path()
    where = dict(roots(AGENT_SOURCES))
    rows = []
    for agent in AGENT_SOURCES:
        connected = record_file(state, agent).is_file()
        enabled = agent in settings.sources
        if not (connected or enabled):
            continue
        mtimes = [f.mtime for f in stored.values() if f.source == agent]
        last = (datetime.fromtimestamp(max(mtimes) / 1000, UTC).isoformat(timespec="seconds")
                .replace("+00:00", "Z") if mtimes else None)
        rows.append(ConnectedAgent(agent, connected, enabled, len(mtimes), last,
                                   str(where[agent])))
    return tuple(rows)


def read_agent_rows(settings: Settings, agent_id: str) -> tuple[ConnectedAgent, ...]:
    """`agent_rows` for a command that builds no index: the index is read if there is one
    (counts 0 when there is none or it cannot be read)."""
    if not any(record_file(settings.state_path(), a).is_file() or a in settings.sources
               for a in AGENT_SOURCES):
        return ()
    from openmemd.store import open_store

    stored: Mapping[str, StoredFile] = {}
    try:
        store = open_store(settings, agent_id, workspace=settings.workspace_for(agent_id))
        try:
            if store.exists():
                stored = store.reader().stored_files()
        finally:
            store.close()
    except (OpenmemdError, OSError, ValueError):
        stored = {}
    return agent_rows(settings, stored)
