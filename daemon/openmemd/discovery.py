"""Which running daemon, if any, serves the index a command means (asked by `openmemd.api.route`,
the one place that decides between a daemon and this process).

A command names an agent, a workspace and (through its config) an index: a SQLite file in a
state dir, or a PostgreSQL namespace. A daemon answers for it only when its ping says it serves
that agent from that workspace into that index.
Anything else (another workspace, another state dir, an older daemon that does not say which
index it writes) means the command works in-process, where the index's writer lock stops it
from racing a daemon that holds the same index file.

Where to look, first to last: the endpoint the user set (flag, OPENMEMD_ENDPOINT, config: only
that one); else the endpoint the daemon serving this state dir recorded there; the default
socket of this shell's runtime dir; and the default sockets of the other runtime dirs a service
may use (an ssh, sudo or cron shell often lacks the service's XDG_RUNTIME_DIR).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from openmemd import paths
from openmemd.client import Client, RequestTimeout, listening
from openmemd.config.locate import Located, config_signature
from openmemd.errors import OpenmemdError
from openmemd.protocol.replies import DaemonPingReply, ServedAgent, expect
from openmemd.protocol.requests import PingRequest

if TYPE_CHECKING:  # a command the daemon answers finds it with a `Located` (`cli/fast.py`)
    from openmemd.config import Settings

PING_TIMEOUT = 2.0
# A daemon that took the ping but has not answered it within PING_TIMEOUT is there, only slow
# (a first index embedding on both cores while the machine is loaded): a command waits this
# long for it rather than work in-process beside it (an MCP session once did, in a CI run).
# A socket nobody listens on is told at once (`client.listening`), so this costs nothing then.
BUSY_PING_TIMEOUT = 20.0
MAX_RECORD_BYTES = 512


class Target(NamedTuple):
    """One agent's index as this command sees it (real paths, so symlinks compare equal)."""

    agent: str
    workspace: str
    # `config.index_location`: a SQLite file's real path, or server and namespace
    index_location: str


class Seen(NamedTuple):
    """A daemon that answered: where, its pid, and per agent what it serves."""

    endpoint: str
    pid: int | None
    agents: Mapping[str, ServedAgent | None]  # None: what an older daemon said is unreadable
    config: tuple[int, ...] | None = None  # `config_signature` of the file it checked (ping)

    def serves(self, target: Target) -> bool:
        info = self.agents.get(target.agent)
        if info is None or not info.index:
            return False  # an older daemon that does not say which index it writes
        if info.index != target.index_location:
            return False
        if not info.workspace:
            return info.ok is False  # it owns this index but could not open it: it answers
            # with the reason (status shows it), which is what the user needs to see
        return _real(info.workspace) == target.workspace

    def describe(self) -> str:
        served = "; ".join(f"{agent}: {info.workspace if info is not None else '?'}"
                           for agent, info in self.agents.items())
        return f"pid {self.pid} at {self.endpoint} serves {served or 'no agent'}"


class Lookup(NamedTuple):
    """The daemon serving every target (None if none) and the others that answered."""

    endpoint: str | None
    others: tuple[Seen, ...] = ()

    def reason(self) -> str:
        """Why no daemon is used, for `status`."""
        if self.others:
            return ("no running daemon serves this workspace and state dir ("
                    + "; ".join(s.describe() for s in self.others) + ")")
        return "openmemd is not running"


def _index(settings: Settings | Located, agent: str) -> str:
    if isinstance(settings, Located):  # a light reading: SQLite only
        return settings.index_location(agent)
    from openmemd.config import index_location

    return index_location(settings, agent)


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def targets(settings: Settings | Located, agents: list[str], workspace: str | None = None,
            owner: str | None = None) -> list[Target]:
    """The targets for these agents; `workspace` (the --workspace flag) overrides the configured
    one of `owner`. An agent the config does not know raises ConfigError: a typo must not
    quietly create a new index."""
    found = []
    for agent in agents:
        configured = settings.workspace_for(agent)
        chosen = workspace if workspace and agent == owner else configured
        found.append(Target(agent, _real(chosen), _index(settings, agent)))
    return found


def read_endpoint_record(state: Path) -> str | None:
    try:
        with open(paths.endpoint_record(state), encoding="utf-8") as fh:
            url = fh.read(MAX_RECORD_BYTES).strip()
    except (OSError, UnicodeDecodeError):
        return None
    return url if url.startswith(("ipc://", "tcp://")) and "\n" not in url else None


def candidate_endpoints(settings: Settings | Located) -> list[str]:
    if chosen := settings.configured_endpoint():  # by flag, env or config: look nowhere else
        return [chosen]
    found = [read_endpoint_record(settings.state_path())]
    found += [f"ipc://{d / 'openmemd.sock'}" for d in paths.runtime_dir_candidates()]
    return list(dict.fromkeys(url for url in found if url))


def _ping(endpoint: str, timeout: float) -> Seen | None:
    if endpoint.startswith("ipc://") and not Path(endpoint[len("ipc://"):]).exists():
        return None  # no socket: not worth a ZeroMQ socket
    try:
        reply = _ask_ping(endpoint, timeout)
    except OpenmemdError as exc:
        # It took the ping, or its socket takes connections: a daemon is there, only busy.
        if not (isinstance(exc, RequestTimeout) or listening(endpoint)):
            return None
        try:
            reply = _ask_ping(endpoint, max(timeout, BUSY_PING_TIMEOUT))
        except OpenmemdError:
            return None
    return Seen(endpoint, reply.pid, reply.agents, reply.config)


def _ask_ping(endpoint: str, timeout: float) -> DaemonPingReply:
    """The ping's reply; RequestTimeout when the daemon took it but did not answer in time
    (`Client.ping` reads that as "not running", which here it is not)."""
    with Client(endpoint, timeout=timeout) as client:
        return expect(client.send(PingRequest(), timeout), DaemonPingReply)


def find(settings: Settings | Located, wanted: list[Target],
         timeout: float = PING_TIMEOUT) -> Lookup:
    others: list[Seen] = []
    seen_pids: set[int] = set()
    for endpoint in candidate_endpoints(settings):
        daemon = _ping(endpoint, timeout)
        if daemon is None or (daemon.pid is not None and daemon.pid in seen_pids):
            continue
        if daemon.pid is not None:
            seen_pids.add(daemon.pid)
        if wanted and all(daemon.serves(t) for t in wanted) and _checked(settings, daemon):
            return Lookup(endpoint, tuple(others))
        others.append(daemon)
    return Lookup(None, tuple(others))


def _checked(settings: Settings | Located, daemon: Seen) -> bool:
    """Whether this command may leave its config file unchecked: a light reading (`Located`)
    reads only the keys that locate the index, so it relies on the daemon having loaded and
    checked this very file as it is now; any other file, or this one changed since, takes the
    full path, which checks it whole (and then uses this daemon all the same)."""
    if not isinstance(settings, Located):
        return True
    return daemon.config == tuple(config_signature(settings.config_file))


def look_up(settings: Settings | Located, agent: str,
            workspace: str | None) -> tuple[Target, Lookup]:
    """This agent's target (its workspace: `workspace`, else the configured one) and what
    discovery found for it."""
    wanted = targets(settings, [agent], workspace, agent)
    return wanted[0], find(settings, wanted)
