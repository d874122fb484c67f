"""Remove temp files that killed runs left behind, and only those.

Every file dreaming writes goes through a temp file beside its target (`markdown_io`,
`memory_write`); kill -9 between creating and renaming it leaves `.<name>.openmemd-<random>.tmp`
for good. A sweep removes them when it starts, under the store lock, so no run of ours is
writing one at that moment. Only names we create are touched, and only in the folders we write
to: a user's own `.something.tmp` is never ours to delete. Older releases named them
`.<name>.<random>.tmp`; those are removed too, but only for the exact targets we write.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from openmemd.config import PHASES

from .layout import BACKUP_DIR, DREAMS_DIR, DREAMS_FILES, MEMORY_FILE, REPORTS_DIR
from .markdown_io import TEMP_MARK, UnsafePathError, workspace_target

log = logging.getLogger("openmemd.dreaming")

_OURS_RE = re.compile(r"^\..+" + re.escape(TEMP_MARK) + r"[A-Za-z0-9_]{8}\.tmp$")
_OLD_RE = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")  # mkstemp's 8 random characters
_STATE_NAME_RE = re.compile(r"^[a-z-]+\.(?:json|jsonl)$")
_REPORT_NAME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
_BACKUP_NAME_RE = re.compile(re.escape(MEMORY_FILE) + r"\.\d{8}T\d{6}\.\d{6}Z(?:-\d+)?$")


def remove_leftovers(workspace: Path) -> int:
    """Delete our temp files in the folders dreaming writes to; the number removed."""
    folders = [("", lambda n: n in (MEMORY_FILE, *DREAMS_FILES)),
               (DREAMS_DIR, lambda n: bool(_STATE_NAME_RE.match(n))),
               (BACKUP_DIR, lambda n: bool(_BACKUP_NAME_RE.match(n))),
               *((f"{REPORTS_DIR}/{p}", lambda n: bool(_REPORT_NAME_RE.match(n)))
                 for p in PHASES)]
    removed = 0
    for rel, old_target in folders:
        try:
            folder = workspace_target(workspace, rel) if rel else Path(workspace)
        except UnsafePathError:
            continue  # a symlinked folder: the sweep refuses it with a clear error anyway
        removed += _clean(folder, old_target)
    if removed:
        log.info("removed %d temp file(s) left by an interrupted dreaming run in %s", removed,
                 workspace)
    return removed


def _clean(folder: Path, old_target: Callable[[str], bool]) -> int:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    removed = 0
    for entry in entries:
        name = entry.name
        old = _OLD_RE.match(name)
        if not (_OURS_RE.match(name) or (old and old_target(old.group("name")))):
            continue
        try:
            if not stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
                continue
        except OSError:
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(entry.path)
            removed += 1
    return removed
