"""Where session transcripts live, which files are transcripts, and which to leave alone.

A transcript is stored in the index as `sessions/<basename>` whatever folder it lives in: the
workspace's `sessions/` or, for an OpenClaw agent, `<stateDir>/agents/<agentId>/sessions/`.
That folder is a second containment root: a transcript is read only if it
resolves inside it, and a symlinked transcript (or folder) is never followed.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openmemd.config import Settings

PREFIX = "sessions/"
# OpenClaw's archives: `<id>.jsonl.reset.<ISO>` / `<id>.jsonl.deleted.<ISO>` (':' as '-').
_ARCHIVE = re.compile(r"\.jsonl\.(?:reset|deleted)\.[0-9][0-9A-Za-z.\-_]*$")
NARRATIVE_RUN_PREFIX = "dreaming-narrative-"


def is_transcript_name(name: str) -> bool:
    """A primary `*.jsonl` or a reset/deleted archive; never `sessions.json` or `.bak.`."""
    if not name or name.startswith(".") or ".bak." in name or name.endswith(".bak"):
        return False
    return name.endswith(".jsonl") or bool(_ARCHIVE.search(name))


def root_of(workspace: Path, sessions_dir: Path | None) -> Path:
    """The transcripts folder: `sessions_dir` (OpenClaw's state dir) or the workspace's."""
    return Path(sessions_dir or Path(workspace) / "sessions")


def locate(workspace: Path, sessions_dir: Path | None, rel: str,
           agent_roots: tuple[tuple[str, Path], ...] = ()) -> tuple[Path, Path]:
    """(containment root, absolute path) of an index path: transcripts under their folder,
    other agents' session files under theirs, everything else under the workspace."""
    rel = Path(rel).as_posix()
    for source, root in agent_roots:
        if rel.startswith(source + "/"):
            return Path(root), Path(root) / rel[len(source) + 1:]
    if rel.startswith(PREFIX) and "/" not in rel[len(PREFIX):] and sessions_dir is not None:
        root = root_of(workspace, sessions_dir)
        return root, root / rel[len(PREFIX):]
    return Path(workspace), Path(workspace) / rel


def is_dreaming_narrative(raw: str) -> bool:
    """A transcript written by OpenClaw's dream-diary run: a custom bootstrap record
    whose runId starts with `dreaming-narrative-`. Indexing it would feed dreams to dreaming."""
    if NARRATIVE_RUN_PREFIX not in raw:
        return False
    for line in raw.split("\n"):
        if NARRATIVE_RUN_PREFIX not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("type") != "custom":
            continue
        for holder in (record, record.get("data"), record.get("value")):
            run_id = holder.get("runId") if isinstance(holder, dict) else None
            if isinstance(run_id, str) and run_id.startswith(NARRATIVE_RUN_PREFIX):
                return True
    return False


def sessions_location(settings: Settings, agent_id: str, workspace: Path) -> Path | None:
    """The agent's transcripts folder when it is not `<workspace>/sessions` (None: the
    workspace's own, with the workspace's containment rules as before)."""
    from openmemd.config.layers import sessions_dir

    where = sessions_dir(settings, agent_id, Path(workspace))
    if os.path.abspath(where) == os.path.abspath(Path(workspace) / "sessions"):
        return None
    return where
