"""Taking a promoted entry back: MEMORY.md -> the archive note, and undoing that.

A demotion is the archive move of `memory_archive` done for one entry the user chose: under
dreaming's store lock (one writer of dreaming's Markdown at a time), the archive note gets the
entry first and MEMORY.md loses it second (killed in between: in both, never in neither),
MEMORY.md through `apply_to_memory` (atomic, never over a concurrent edit). Where it was is
kept in `memory/.dreams/demoted.json`, so `undo` puts it back: byte for byte when MEMORY.md has
not changed since, else at the end of its dated section (or a new one at the end).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmemd.errors import BadRequestError, NotFoundError
from openmemd.text.promotion import SECTION, marker_keys

from .clock import as_utc, day_bucket, resolve_timezone
from .layout import DREAMS_DIR, MEMORY_FILE
from .lockfile import store_lock
from .markdown_io import atomic_write_text, read_text, workspace_target, write_json
from .memory_archive import (
    PromotedBlock,
    archive_path,
    promoted_blocks,
    remove_blocks,
    write_archive,
)
from .memory_write import apply_to_memory

DEMOTED_PATH = f"{DREAMS_DIR}/demoted.json"
_KEEP = 50  # undo records kept (the newest)


class EntryChangedError(BadRequestError):
    """The entry is not what the caller saw (edited since): nothing is moved."""


def digest(block_text: str) -> str:
    """What a caller echoes to say which version of an entry it means."""
    return hashlib.sha256(block_text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Moved:
    key: str
    archive: str  # the archive note it went to (or came back from)
    memory_chars: int  # MEMORY.md's size after the move
    exact: bool = True  # undo: MEMORY.md is byte for byte what it was before the demotion


def section_of(lines: list[str], line: int) -> str | None:
    """The promotion heading the entry at `line` sits under, if any."""
    for i in range(line, -1, -1):
        if SECTION.match(lines[i]):
            return lines[i]
        if lines[i].startswith("#"):
            return None
    return None


def demote(workspace: Path, key: str, *, expected: str | None = None, timezone: str = "",
           backups: int = 0) -> Moved:
    """Move the promoted entry `key` out of MEMORY.md into today's archive note. `expected`:
    its `digest` as the caller saw it (refused when it differs)."""
    ws = Path(workspace)
    day = day_bucket(as_utc(None), resolve_timezone(timezone))
    rel = archive_path(day)
    record: dict[str, Any] = {}

    def build(current: str) -> str:
        block = _find(current, key, expected)
        if "archiveBefore" not in record:  # retries after a concurrent edit: the first state
            record["archiveBefore"] = read_text(ws, rel, strict=True)
        write_archive(ws, day, [block])
        after = remove_blocks(current, {key})
        record.update(before=current, after=after, block=block.text,
                      section=section_of(current.split("\n"), block.line),
                      archive=rel, archiveAfter=read_text(ws, rel, strict=True))
        return after

    with store_lock(ws):
        done = apply_to_memory(ws, build, backups=backups)
        records = _load(ws)
        records.pop(key, None)
        records[key] = record
        write_json(ws, DEMOTED_PATH, dict(list(records.items())[-_KEEP:]))
    return Moved(key, rel, len(done.after))


def undo(workspace: Path, key: str, *, backups: int = 0) -> Moved:
    """Put a demoted entry back into MEMORY.md and take it out of the archive note."""
    ws = Path(workspace)
    with store_lock(ws):
        records = _load(ws)
        record = records.get(key)
        if record is None:
            raise NotFoundError(f"no demotion of {key!r} to undo")
        exact = [False]

        def build(current: str) -> str:
            if key in marker_keys(current):
                raise EntryChangedError(f"{key!r} is already in {MEMORY_FILE}; nothing to undo")
            exact[0] = current == record["after"]
            return str(record["before"]) if exact[0] else _reinsert(current, record)

        done = apply_to_memory(ws, build, backups=backups)
        _unarchive(ws, record)  # after MEMORY.md has it back: in both, never in neither
        del records[key]
        write_json(ws, DEMOTED_PATH, records)
    return Moved(key, str(record["archive"]), len(done.after), exact[0])


def _find(current: str, key: str, expected: str | None) -> PromotedBlock:
    blocks = {b.key: b for b in promoted_blocks(current)}
    block = blocks.get(key)
    if block is None:
        if key in marker_keys(current):
            raise EntryChangedError(f"{key!r} is in {MEMORY_FILE} but no longer a promoted "
                                    "entry (its bullet was edited); nothing was moved")
        raise NotFoundError(f"no promoted entry {key!r} in {MEMORY_FILE}")
    if expected and digest(block.text) != expected:
        raise EntryChangedError(f"entry {key!r} changed since it was listed; list it again "
                                "(nothing was moved)")
    return block


def _reinsert(current: str, record: dict[str, Any]) -> str:
    """`current` with the block at the end of its section, or in a new one at the end."""
    lines = current.split("\n")
    block = str(record["block"]).split("\n")
    section = record.get("section")
    if section in lines:
        end = lines.index(section) + 1
        while end < len(lines) and not lines[end].startswith("#"):
            end += 1
        while end > 0 and not lines[end - 1].strip():
            end -= 1
        return "\n".join(lines[:end] + block + lines[end:])
    base = current if not current or current.endswith("\n") else current + "\n"
    heading = [section, ""] if section else []
    return base + "\n".join(["", *heading, *block, ""])


def _unarchive(ws: Path, record: dict[str, Any]) -> None:
    rel = str(record["archive"])
    now = read_text(ws, rel, strict=True)
    if now is None:
        return
    if now == record.get("archiveAfter"):
        before = record.get("archiveBefore")
        if before is None:
            os.unlink(workspace_target(ws, rel))
        else:
            atomic_write_text(ws, rel, str(before))
        return
    piece = f"\n{record['block']}\n"
    if piece in now:
        atomic_write_text(ws, rel, now.replace(piece, "", 1))


def _load(ws: Path) -> dict[str, Any]:
    text = read_text(ws, DEMOTED_PATH)
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
