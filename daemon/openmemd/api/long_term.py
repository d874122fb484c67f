"""The Memory and Dreams views, the same from the daemon and in process: MEMORY.md entry by
entry with why each promoted entry is there, demoting one (and undoing it), and the dreaming
files with a dry run of tonight's sweep. They read and write the Markdown, not the index (the
daemon's watcher re-indexes MEMORY.md and the archive note like any edit)."""

from __future__ import annotations

import os
from pathlib import Path

from openmemd.config import Settings
from openmemd.protocol.replies import (
    DemoteReply,
    DreamResult,
    DreamsFileText,
    DreamsReply,
    MemoryReply,
)
from openmemd.protocol.requests import DemoteRequest, DreamsRequest, MemoryRequest, UndoRequest


def memory_reply(workspace: str | os.PathLike[str], settings: Settings,
                 request: MemoryRequest) -> MemoryReply:
    from openmemd.dreaming.memory_view import memory_view

    view = memory_view(Path(workspace), settings.dreaming, settings.context.bootstrap_max_chars)
    return MemoryReply.from_json(view.to_dict())


def demote_reply(workspace: str | os.PathLike[str], settings: Settings,
                 request: DemoteRequest) -> DemoteReply:
    from openmemd.dreaming.demotion import demote

    moved = demote(Path(workspace), request.key, expected=request.digest,
                   timezone=settings.dreaming.timezone, backups=settings.dreaming.deep.backups)
    return DemoteReply(moved.key, moved.archive, moved.memory_chars)


def undo_reply(workspace: str | os.PathLike[str], settings: Settings,
               request: UndoRequest) -> DemoteReply:
    from openmemd.dreaming.demotion import undo

    moved = undo(Path(workspace), request.key, backups=settings.dreaming.deep.backups)
    return DemoteReply(moved.key, moved.archive, moved.memory_chars, moved.exact)


def dreams_reply(workspace: str | os.PathLike[str], settings: Settings,
                 request: DreamsRequest) -> DreamsReply:
    from openmemd.api.dreams import dream
    from openmemd.dreaming.memory_view import dreams_files

    ws = Path(workspace)
    diary, reports = dreams_files(ws)
    tonight = dream(ws, settings.dreaming, "all", True, settings.context.bootstrap_max_chars,
                    settings.sources)
    return DreamsReply(
        DreamsFileText.from_json(diary.to_dict()) if diary is not None else None,
        tuple(DreamsFileText.from_json(r.to_dict()) for r in reports),
        DreamResult.from_json(tonight))
