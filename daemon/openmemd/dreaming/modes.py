"""How readable the files and folders openmemd creates inside a workspace are.

A phase report quotes notes, MEMORY.md receives promoted notes, a daily note sits beside
MEMORY.md. When the user made a note 0600 (or MEMORY.md 0600, or memory/ 0700), its words must
not reappear in a 0644 file another local user can read. So a file we create gets its default
owner bits plus only the group/other *read* bits that every file it quotes, MEMORY.md and
memory/ itself also grant, minus the umask. A folder likewise gets only the group/other bits
memory/ has. openmemd never grants group/other write, whatever the umask (a umask of 000 must
not make memory/.dreams world-writable). Files and folders that exist keep their mode: the
user chose it, and every writer replaces a file with the mode it had.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

FILE_MODE = 0o644  # a new report, daily note or MEMORY.md, before the rule narrows it
PRIVATE_MODE = 0o600  # OpenClaw's default for DREAMS.md and the .dreams state
_DIR_SHARED = 0o055  # group/other may at most list and enter a folder we make
_MEMORY_DIR = "memory"
_MEMORY_FILE = "MEMORY.md"

_umask_guard = threading.Lock()


def umask() -> int:
    """The process umask, read without changing it where the kernel tells (Linux), since
    setting it to probe would race with files other threads are creating meanwhile."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_guard:
        current = os.umask(0o077)
        os.umask(current)
    return current


def new_file_mode(workspace: Path, sources: Iterable[str | Path] = (), *,
                  default: int = FILE_MODE) -> int:
    """The mode for a file we create in `workspace` that quotes `sources` (workspace-relative
    or absolute paths; missing ones are ignored)."""
    shared = default & 0o044
    for ref in _references(Path(workspace), sources):
        shared &= ref
    return ((default & 0o700) | shared) & ~umask()


def new_dir_mode(workspace: Path) -> int:
    """The mode for a folder we create in `workspace`."""
    shared = _DIR_SHARED
    for ref in _references(Path(workspace), (), files=False):
        shared &= ref
    return (0o700 | shared) & ~umask()


def make_dirs(workspace: Path, directory: Path) -> None:
    """Create `directory` and its missing parents inside `workspace` with `new_dir_mode`
    (existing ones are left as they are)."""
    missing: list[Path] = []
    current = Path(directory)
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    if not missing:
        return
    mode = new_dir_mode(workspace)
    for folder in reversed(missing):
        try:
            os.mkdir(folder, mode)  # `mode` is already within the umask: it is the final one
        except FileExistsError:
            continue  # made by a concurrent writer meanwhile: theirs, with its mode


def _references(workspace: Path, sources: Iterable[str | Path], *,
                files: bool = True) -> list[int]:
    """Modes of what bounds a new entry: memory/ (or, before memory/ exists, the workspace
    folder), and for a file also MEMORY.md and the sources."""
    memory_dir = workspace / _MEMORY_DIR
    paths = [memory_dir if memory_dir.exists() else workspace]
    if files:
        paths += [workspace / _MEMORY_FILE, *(workspace / s for s in sources)]
    modes = []
    for path in paths:
        try:
            modes.append(os.stat(path).st_mode & 0o777)
        except (OSError, ValueError):
            continue
    return modes
