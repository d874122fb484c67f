"""Whose is a `<pid>:<epochMs>` lock file, and is its owner gone? (for lockfile.py)

OpenClaw's lock format says only a pid and a time. A pid is only meaningful on the machine and
in the pid namespace that wrote it, so when openmemd takes the lock it also writes a sidecar
`<lock>.owner` with the same token and the host it was taken on (hostname, boot id, pid
namespace). A lock whose sidecar names this host, whose pid is dead here (or was reused: the
process now holding the pid started after the lock was taken) belongs to a dead process and is
taken over at once. Any other lock -- OpenClaw's, another host's or container's, one whose
sidecar is missing because its owner died between the two writes -- keeps OpenClaw's rule:
stale only when older than 60 s and its pid is not alive here.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from functools import lru_cache
from pathlib import Path

SIDECAR_SUFFIX = ".owner"
# A process whose start time is this much after the lock's time cannot have taken it (clock
# tick granularity and the lock's ms rounding are far smaller).
_START_SLACK_SECONDS = 2.0


@lru_cache(maxsize=1)
def host_id() -> str:
    """This host and pid namespace, as a line: what a lock's pid is relative to."""
    boot = _read("/proc/sys/kernel/random/boot_id").strip()
    try:
        pidns = os.readlink("/proc/self/ns/pid")
    except OSError:
        pidns = ""
    return f"{socket.gethostname()} {boot} {pidns}".strip()


def sidecar_path(lock: Path) -> Path:
    return lock.with_name(lock.name + SIDECAR_SUFFIX)


def write_sidecar(lock: Path, token: str) -> None:
    """Best effort: without a sidecar the lock just falls back to the 60 s age rule."""
    with contextlib.suppress(OSError):
        sidecar_path(lock).write_text(f"{token.strip()}\n{host_id()}\n", encoding="utf-8")
        os.chmod(sidecar_path(lock), 0o600)


def remove_sidecar(lock: Path, token: str | None) -> None:
    """Remove the sidecar if it still describes `token` (a new owner may have written its own)."""
    side = sidecar_path(lock)
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if token is None or side.read_text(encoding="utf-8").partition("\n")[0].strip() \
                == token.strip():
            side.unlink()


def is_ours_to_judge(lock: Path, content: str) -> bool:
    """True if the lock was taken by openmemd on this host and pid namespace."""
    try:
        token, _, host = sidecar_path(lock).read_text(encoding="utf-8").partition("\n")
    except OSError:
        return False
    return token.strip() == content.strip() and host.strip() == host_id()


def parse_token(content: str) -> tuple[int, int] | None:
    """(pid, epochMs) of `<pid>:<epochMs>`, or None when unparsable."""
    head, sep, tail = content.strip().partition(":")
    if not sep or not head.isdigit():
        return None
    pid = int(head)
    if pid <= 0:
        return None
    return pid, int(tail) if tail.isdigit() else 0


def process_alive(pid: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - os.kill(pid, 0) would terminate it there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # EPERM and friends: it exists, it is just not ours
    return _is_live_process(pid)


def owner_gone(pid: int, epoch_ms: int) -> bool:
    """The pid is dead here, or it now names a process started after the lock was taken."""
    if not process_alive(pid):
        return True
    started = process_start_time(pid)
    return started is not None and epoch_ms > 0 and \
        started > epoch_ms / 1000 + _START_SLACK_SECONDS


def process_start_time(pid: int) -> float | None:
    """Unix time the process started (Linux /proc); None where that cannot be known."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return None
    try:
        fields = stat.rpartition(")")[2].split()
        ticks = int(fields[19])  # field 22 of stat: starttime, in clock ticks since boot
        hz = os.sysconf("SC_CLK_TCK")
        boot = _boot_time()
    except (IndexError, ValueError, OSError):
        return None
    return None if boot is None else boot + ticks / hz


def _is_live_process(pid: int) -> bool:
    # A zombie (killed, not yet reaped by its parent) answers kill(0) but holds nothing.
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return True
    fields = stat.rpartition(")")[2].split()
    return not (fields and fields[0] in ("Z", "X"))


def _boot_time() -> float | None:
    for line in _read("/proc/stat").splitlines():
        if line.startswith("btime "):
            with contextlib.suppress(ValueError):
                return float(line.split()[1])
    uptime = _read("/proc/uptime").split()
    if uptime:
        with contextlib.suppress(ValueError):
            return time.time() - float(uptime[0])
    return None


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""
