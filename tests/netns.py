"""A second host on this machine, for faults that need one: a network namespace joined to this
one by a veth pair. `cut()` takes its link down, so it vanishes as a host that loses power or
its network does: its connections are not closed, packets to it just go nowhere.

Needs root and iproute2 (`ip`); `unavailable()` says why not, for a skip, and a machine that
refuses to make the namespace skips the test too.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


def unavailable() -> str | None:
    if os.geteuid() != 0:
        return "a network namespace needs root"
    if not (shutil.which("ip") and shutil.which("nsenter")):
        return "a network namespace needs iproute2 (ip) and nsenter"
    return None


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {proc.stderr.strip()}")


@dataclass(frozen=True)
class OtherHost:
    name: str  # the namespace (for `ip netns exec`, nsenter --net=/run/netns/<name>)
    address: str  # its address, seen from here
    here: str  # this namespace's address, seen from it
    network: str  # both, as a CIDR
    _link: str

    def run_there(self, *command: str) -> list[str]:
        return ["ip", "netns", "exec", self.name, *command]

    def cut(self) -> None:
        _ip("netns", "exec", self.name, "ip", "link", "set", self._link, "down")


@contextmanager
def other_host() -> Iterator[OtherHost]:
    token = uuid.uuid4().hex[:6]
    name, mine, theirs = f"omd-{token}", f"om{token}a", f"om{token}b"
    subnet = f"10.211.{random.randrange(256)}.{4 * random.randrange(64)}"
    base = subnet.rsplit(".", 1)
    here, there = f"{base[0]}.{int(base[1]) + 1}", f"{base[0]}.{int(base[1]) + 2}"
    try:
        _ip("netns", "add", name)
    except RuntimeError as exc:  # a container without the right to make one: not our failure
        import pytest

        pytest.skip(f"cannot make a network namespace here: {exc}")
    try:
        _ip("link", "add", mine, "type", "veth", "peer", "name", theirs)
        _ip("link", "set", theirs, "netns", name)
        _ip("addr", "add", f"{here}/30", "dev", mine)
        _ip("link", "set", mine, "up")
        for args in (("addr", "add", f"{there}/30", "dev", theirs), ("link", "set", theirs, "up"),
                     ("link", "set", "lo", "up")):
            _ip("netns", "exec", name, "ip", *args)
        yield OtherHost(name, there, here, f"{subnet}/30", theirs)
    finally:
        subprocess.run(["ip", "link", "del", mine], capture_output=True)
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
