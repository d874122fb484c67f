"""What the daemon does differently beside an OpenClaw install: watch the agent's transcripts
in OpenClaw's state dir, leave dreaming to OpenClaw where it dreams, and say so in `status`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from openmemd.config import Settings
from openmemd.config.layers import dreaming_left_to_openclaw
from openmemd.log import get_logger
from openmemd.protocol.records import replace
from openmemd.protocol.status import DreamingStatus, WatchStatus
from openmemd.server.indexer import Indexer
from openmemd.server.session_watch import start_session_watcher
from openmemd.server.watcher import Watcher


class ServedAgent(Protocol):
    """What these rules read of an agent the daemon serves (server/agent.py's AgentRuntime)."""

    @property
    def agent_id(self) -> str: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def workspace(self) -> Path | None: ...

log = get_logger(__name__)

LEFT_TO_OPENCLAW = "dreaming: left to OpenClaw"


def watch_sessions(root: Path | None, indexer: Indexer, settings: Settings, agent_id: str,
                   force_polling: bool) -> Watcher | None:
    """A watcher on the agent's transcripts folder (`root`) when it lies outside the
    workspace (OpenClaw's)."""
    if root is None or "sessions" not in settings.sources:
        return None
    if not Path(root).is_dir():
        log.info("sessions_dir_missing", agent=agent_id, root=str(root),
                 note="transcripts are picked up by the reconcile scan once it exists")
        return None
    return start_session_watcher(Path(root), indexer, settings, name=agent_id,
                                 force_polling=force_polling)


def dreams_here(settings: Settings, agent_id: str, workspace: Path | None) -> bool:
    """Whether openmemd's scheduled sweep covers this agent (not when OpenClaw dreams there)."""
    ws = workspace or settings.workspace_for(agent_id)
    return not dreaming_left_to_openclaw(settings, ws)


def sessions_status(sessions_dir: Path | None, watcher: Watcher | None
                    ) -> tuple[str | None, WatchStatus | None]:
    """The agent's transcripts folder, when it lies outside the workspace, and the state of
    its watcher (`running (inotify)`: which backend, as the workspace watcher's summary)."""
    if sessions_dir is None:
        return None, None
    if watcher is None:
        return str(sessions_dir), WatchStatus.off("not watched")
    st = watcher.status()
    return str(sessions_dir), replace(st, state=st.summary)


def dreaming_status(agent: ServedAgent, dreaming: DreamingStatus) -> DreamingStatus:
    """The agent's dreaming, saying so where OpenClaw dreams instead."""
    if agent.workspace is None or dreams_here(agent.settings, agent.agent_id, agent.workspace):
        return dreaming
    return replace(dreaming, left_to_openclaw=True, note=LEFT_TO_OPENCLAW)


def notes(settings: Settings, agents: Mapping[str, ServedAgent]) -> list[str]:
    """One line each: what openclaw.json changed or could not (shown by `status`)."""
    loaded = settings.loaded
    out: list[str] = []
    if loaded is None:
        return out
    if loaded.warning:
        out.append(loaded.warning)
    if loaded.ignored:
        out.append("ignored from openclaw.json: " + ", ".join(loaded.ignored))
    for agent_id, agent in agents.items():
        out += refused_extra_paths(agent)
        if agent.workspace is not None and not dreams_here(settings, agent_id, agent.workspace):
            out.append(f"{agent_id}: {LEFT_TO_OPENCLAW}")
    return out


def refused_extra_paths(agent: ServedAgent) -> list[str]:
    """Extra paths outside the workspace: openmemd reads nothing outside it, and says so
    rather than dropping them silently (OpenClaw indexes them)."""
    if agent.workspace is None:
        return []
    ws = os.path.abspath(agent.workspace)
    out = []
    for raw in agent.settings.extra_paths:
        full = os.path.abspath(os.path.join(ws, os.path.expanduser(raw.strip())))
        rel = os.path.relpath(full, ws)
        if raw.strip() and (rel == ".." or rel.startswith(".." + os.sep)):
            out.append(f"{agent.agent_id}: extra path {raw} is outside the workspace {ws}: "
                       "not indexed")
    return out


def log_start(settings: Settings, agents: Mapping[str, ServedAgent]) -> None:
    for agent in agents.values():
        for line in refused_extra_paths(agent):
            log.warning("extra_path_refused", detail=line)
    loaded = settings.loaded
    if loaded is not None and not loaded.warning and loaded.openclaw is not None:
        log.info("openclaw_json_loaded", path=loaded.openclaw.path,
                 agents=[a.id for a in loaded.openclaw.agents],
                 ignored=list(loaded.ignored) or None)
