"""`openmemd store adopt`: make the agent's configured PostgreSQL namespace this workspace's.

A namespace remembers the workspace that fills it, and refuses a writer for any other (see
store/postgres/owner.py): a second workspace configured with the same namespace would
otherwise replace the first one's index with its own. Adopting is how a namespace is moved on
purpose (the workspace moved to another folder or host, or the namespace is given to another
workspace): the next writer of this workspace then makes its content this workspace's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from openmemd.config import Settings
from openmemd.errors import WorkspaceError
from openmemd.log import get_logger
from openmemd.store import open_store

log = get_logger("openmemd.store_adopt")


@dataclass(frozen=True)
class AdoptReport:
    location: str  # `IndexStore.location()`: never a password
    workspace: str
    previous: str  # the workspace it was filled from; "" if none was recorded

    def to_dict(self) -> dict[str, str]:
        return {"location": self.location, "workspace": self.workspace,
                "previous": self.previous}


def adopt_namespace(settings: Settings, agent_id: str,
                    workspace: Path | None = None) -> AdoptReport:
    """Record `workspace` (default: the agent's configured one) as the one that fills the
    agent's namespace. Refused while a daemon writes the namespace (stop it first)."""
    ws = (workspace or settings.workspace_for(agent_id)).expanduser()
    if not ws.is_dir():
        raise WorkspaceError(f"workspace {ws} does not exist or is not a directory")
    store = open_store(settings, agent_id, workspace=ws)
    try:
        previous = store.adopt()
        report = AdoptReport(location=store.location(), workspace=str(ws.resolve()),
                             previous=previous)
    finally:
        store.close()
    log.info("store.adopt.done", **report.to_dict())
    return report
