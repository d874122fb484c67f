"""Every on-disk location openmemd uses, from platformdirs. Nothing else hard-codes a path.

On Linux the four user directories follow the XDG rules platformdirs applies there (an
absolute `$XDG_*_HOME`, else the default under the home directory), computed here: importing
platformdirs costs a CLI command more than the rest of its start-up (tests/test_paths.py pins
that both agree). Elsewhere platformdirs is asked, on first use.

State (indexes, their -wal/-shm, embedding cache, locks, rebuild and backup copies) holds every
chunk of the user's memory, so it is private: files 0600 in directories 0700, created that way
and tightened when an older version left them looser.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

APP = "openmemd"
# platformdirs' user directory -> (XDG variable, default under the home directory), Linux
_XDG = {"user_config_dir": ("XDG_CONFIG_HOME", "~/.config"),
        "user_state_dir": ("XDG_STATE_HOME", "~/.local/state"),
        "user_cache_dir": ("XDG_CACHE_HOME", "~/.cache"),
        "user_data_dir": ("XDG_DATA_HOME", "~/.local/share")}


def user_dir(kind: str) -> Path:
    """platformdirs' `kind` (user_config_dir, ...) for openmemd."""
    if sys.platform.startswith("linux"):
        var, default = _XDG[kind]
        base = os.environ.get(var, "")
        return Path(base if os.path.isabs(base) else os.path.expanduser(default)) / APP
    import platformdirs

    return Path(getattr(platformdirs, kind)(APP))


def config_file() -> Path:
    return user_dir("user_config_dir") / "config.toml"


def state_dir() -> Path:
    return user_dir("user_state_dir")


def cache_dir() -> Path:
    return user_dir("user_cache_dir")


def log_dir() -> Path:
    """platformdirs' user log dir: `<state dir>/log` on Linux (as platformdirs has it there),
    ~/Library/Logs/openmemd on macOS, beside the launchd agent's logs."""
    if sys.platform.startswith("linux"):
        return state_dir() / "log"
    import platformdirs

    return Path(platformdirs.user_log_dir(APP))


def log_file() -> Path:
    """openmemd's own log file, for what has no terminal or journal to go to (a hook run by
    another program, whose stderr is that program's)."""
    return log_dir() / "openmemd.log"


def tiktoken_cache_dir() -> Path:
    return cache_dir() / "tiktoken"


def openclaw_workspace() -> Path:
    return Path.home() / ".openclaw" / "workspace"


def default_workspace() -> Path:
    """OpenClaw's workspace when it exists (so both tools share one memory), else our own."""
    openclaw = openclaw_workspace()
    if openclaw.is_dir():
        return openclaw
    return user_dir("user_data_dir") / "workspace"


def runtime_dir() -> Path:
    """Directory for the ipc socket and lock: $XDG_RUNTIME_DIR/openmemd, or a private temp dir.

    ipc socket paths are limited to ~107 bytes, so the fallback stays short (/tmp/openmemd-<uid>).
    """
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and Path(base).is_dir() and len(base) < 60:
        return Path(base) / APP
    uid = os.getuid() if hasattr(os, "getuid") else 0
    if Path("/tmp").is_dir():
        tmp = "/tmp"
    else:  # tempfile is not imported for nothing: every command asks for this path
        import tempfile

        tmp = tempfile.gettempdir()
    return Path(tmp) / f"{APP}-{uid}"


def default_endpoint() -> str:
    return f"ipc://{runtime_dir() / 'openmemd.sock'}"


def endpoint_record(state: Path) -> Path:
    """Where a daemon records the endpoint it serves a state dir on (read first by clients)."""
    return state / "openmemd.endpoint"


def runtime_dir_candidates() -> list[Path]:
    """Every runtime dir a daemon of this user may have used, this shell's first.

    A daemon started by the service manager sees XDG_RUNTIME_DIR; a shell (ssh, sudo -u, cron)
    may not, and would otherwise look only in /tmp and report "not running".
    """
    uid = os.getuid() if hasattr(os, "getuid") else 0
    found = [runtime_dir(), Path(f"/run/user/{uid}") / APP, Path("/tmp") / f"{APP}-{uid}"]
    return list(dict.fromkeys(found))


PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def _tighten(path: str | Path, mode: int) -> None:
    """Drop the permissions `mode` does not grant (links left alone; another user's file, which
    we may not chmod, too)."""
    try:
        st = os.lstat(path)
        if st.st_mode & ~mode & 0o777 and not stat.S_ISLNK(st.st_mode):
            os.chmod(path, stat.S_IMODE(st.st_mode) & mode)
    except (FileNotFoundError, PermissionError):
        pass


def private_dir(path: Path) -> Path:
    """Create `path` and its missing parents 0700; tighten `path` itself if it is looser."""
    missing = []
    current = Path(path)
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            pass
    _tighten(path, PRIVATE_DIR_MODE)
    return Path(path)


def private_file(path: str | Path) -> None:
    """Make sure `path` exists as a 0600 file (SQLite then gives its -wal/-shm the same mode)."""
    try:
        # O_NONBLOCK: a FIFO in the file's place must not block the open (it fails instead)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE_MODE))
    except OSError:
        return  # no directory, no space: SQLite's own open reports it as it always did
    _tighten(path, PRIVATE_FILE_MODE)


def private_state(index_dir: Path, root: Path) -> Path:
    """`<state>/memory` (openmemd's own) 0700 with every file in it 0600, looser ones tightened.

    The state directory itself is created 0700; an existing one is tightened only when it is the
    platform default: a `state_dir` the user pointed elsewhere may be a directory they share.
    """
    private_dir(index_dir)
    if Path(root) == state_dir():
        _tighten(root, PRIVATE_DIR_MODE)
    try:
        names = os.listdir(index_dir)
    except OSError:
        return index_dir
    for name in names:
        full = Path(index_dir) / name
        if os.path.isfile(full) and not os.path.islink(full):
            _tighten(full, PRIVATE_FILE_MODE)
    return index_dir
