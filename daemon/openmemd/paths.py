"""Every on-disk location openmemd uses, from platformdirs. Nothing else hard-codes a path."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import platformdirs

APP = "openmemd"


def config_file() -> Path:
    return Path(platformdirs.user_config_dir(APP)) / "config.toml"


def state_dir() -> Path:
    return Path(platformdirs.user_state_dir(APP))


def cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir(APP))


def tiktoken_cache_dir() -> Path:
    return cache_dir() / "tiktoken"


def openclaw_workspace() -> Path:
    return Path.home() / ".openclaw" / "workspace"


def default_workspace() -> Path:
    """OpenClaw's workspace when it exists (so both tools share one memory), else our own."""
    openclaw = openclaw_workspace()
    if openclaw.is_dir():
        return openclaw
    return Path(platformdirs.user_data_dir(APP)) / "workspace"


def runtime_dir() -> Path:
    """Directory for the ipc socket and lock: $XDG_RUNTIME_DIR/openmemd, or a private temp dir.

    ipc socket paths are limited to ~107 bytes, so the fallback stays short (/tmp/openmemd-<uid>).
    """
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and Path(base).is_dir() and len(base) < 60:
        return Path(base) / APP
    uid = os.getuid() if hasattr(os, "getuid") else 0
    tmp = "/tmp" if Path("/tmp").is_dir() else tempfile.gettempdir()
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
