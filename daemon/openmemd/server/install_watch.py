"""Notices openmemd being upgraded or reinstalled under a running daemon.

`pip install` while the daemon runs replaces (or, switching to an editable install, removes)
the package's files. The daemon keeps serving the code it started with -- it imported all it
can need before answering (preload.py) -- but it is no longer the installed version, so
`status` says so, with how to restart it. At start the package's files are recorded (path,
size, modification time); a status request compares them again, at most every
CHECK_EVERY_S (a few hundred stat calls), and once a change is seen it stays reported.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import openmemd
from openmemd.log import get_logger
from openmemd.server.service import LABEL, UNIT_NAME
from openmemd.server.util import iso

log = get_logger(__name__)

CHECK_EVERY_S = 5.0
FileStates = dict[str, tuple[int, int]]  # path under the package -> (size, mtime in ns)


def package_dir() -> Path:
    return Path(openmemd.__file__).resolve().parent


def file_states(root: Path) -> FileStates:
    """The package's files; bytecode caches are left out (Python rewrites them)."""
    found: FileStates = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            path = os.path.join(folder, name)
            try:
                st = os.stat(path)
            except OSError:  # gone while we looked: counts as removed
                continue
            found[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns)
    return found


def describe_change(before: FileStates, now: FileStates) -> str | None:
    """'2 changed, 1 removed, e.g. search/pipeline.py', or None when nothing changed."""
    changed = sorted(p for p in before.keys() & now.keys() if before[p] != now[p])
    removed = sorted(before.keys() - now.keys())
    added = sorted(now.keys() - before.keys())
    counts = [f"{len(paths)} {what}" for paths, what in ((changed, "changed"),
                                                          (removed, "removed"), (added, "added"))
              if paths]
    if not counts:
        return None
    example = (changed or removed or added)[0]
    return f"{', '.join(counts)}, e.g. {example}"


def restart_hint() -> str:
    service = (f"launchctl kickstart -k gui/{os.getuid()}/{LABEL}" if sys.platform == "darwin"
               else f"systemctl --user restart {UNIT_NAME.removesuffix('.service')}")
    return f"as a service: `{service}`; otherwise stop it and start `openmemd run` again"


class InstallWatch:
    def __init__(self, root: Path | None = None, *, check_every_s: float = CHECK_EVERY_S) -> None:
        self.root = root or package_dir()
        self.started = time.time()
        self._files = file_states(self.root)
        self._check_every_s = check_every_s
        self._checked = time.monotonic()
        self._lock = threading.Lock()
        self._problem: str | None = None

    def problems(self) -> list[str]:
        """The upgrade, once seen; [] while the files are those the daemon started with."""
        with self._lock:
            now = time.monotonic()
            if self._problem is None and now - self._checked >= self._check_every_s:
                self._checked = now
                change = describe_change(self._files, file_states(self.root))
                if change is not None:
                    log.warning("package_files_changed", package=str(self.root), change=change)
                    self._problem = (
                        f"openmemd was upgraded or reinstalled under this daemon (package "
                        f"files in {self.root} changed since it started at "
                        f"{iso(self.started)}: {change}); it still runs the code it started "
                        f"with: restart it ({restart_hint()})")
            return [self._problem] if self._problem is not None else []
