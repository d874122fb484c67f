"""Local or daemon, decided here and nowhere else.

A command, an MCP session or an agent asks here for the daemon that serves its agent,
workspace and index (`daemon_for`; `openmemd.discovery` pings the candidates), or for a
handler (`handler_for`, or a `SessionRoute`) and sends typed requests to what it gets: a
`Client` of that daemon, or a `LocalHandler` working in this process. Light to import: a
command a running daemon answers (cli/fast.py) asks here without loading settings records,
logging or index code.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openmemd import discovery
from openmemd.client import Client
from openmemd.config.locate import Located
from openmemd.discovery import Lookup
from openmemd.errors import IndexLockedError, UnavailableError
from openmemd.protocol.handler import Handler
from openmemd.protocol.replies import Reply
from openmemd.protocol.requests import AddRequest, Request

if TYPE_CHECKING:  # the local handler loads the index code: only when it is needed
    from openmemd.api.handler import LocalHandler
    from openmemd.config import Settings
    from openmemd.progress import Progress

__all__ = ["Lookup", "SessionRoute", "daemon_for", "daemons_serving", "handler_for"]

RECHECK_SECONDS = 5.0  # a session without a daemon looks for one again at most this often


def daemon_for(settings: Settings | Located, agent: str,
               workspace: str | os.PathLike[str] | None, timeout: float = 600.0
               ) -> Client | None:
    """A client of the daemon serving this agent's workspace and index, or None."""
    _target, lookup = discovery.look_up(settings, agent,
                                        os.fspath(workspace) if workspace else None)
    return Client(lookup.endpoint, timeout=timeout) if lookup.endpoint else None


def daemons_serving(settings: Settings | Located, agents: list[str],
                    workspace: str | None = None, owner: str | None = None) -> Lookup:
    """The daemon serving every one of these agents' indexes (`workspace`, the --workspace
    flag, is `owner`'s), if one does, and the others that answered (`status`, `doctor`)."""
    return discovery.find(settings, discovery.targets(settings, agents, workspace, owner))


def handler_for(settings: Settings, agent: str,
                workspace: str | os.PathLike[str] | None = None, *,
                timeout: float = 600.0, progress: Progress | None = None,
                notice: Callable[[str], None] | None = None) -> Handler:
    """The daemon serving this agent and workspace, else this process (one command)."""
    target, lookup = discovery.look_up(settings, agent,
                                       os.fspath(workspace) if workspace else None)
    if lookup.endpoint is not None:
        return Client(lookup.endpoint, timeout=timeout)
    from openmemd.api.handler import LocalHandler  # the index code: only when it works here

    local = LocalHandler(settings, workspace=workspace, owner=agent, progress=progress,
                         notice=notice)
    if not lookup.others:
        return local
    return _NamingTheDaemons(local, f"{lookup.reason()}; this command's workspace is "
                                    f"{target.workspace}")


class _NamingTheDaemons:
    """This process's handler, beside daemons that serve something else: an index one of them
    writes says which they serve ("openmemd run --workspace X", then "openmemd index" without
    it: the daemon serves X, the command the default workspace, and both name one index)."""

    def __init__(self, local: Handler, daemons: str) -> None:
        self._local = local
        self._daemons = daemons

    def __call__(self, request: Request) -> Reply:
        try:
            return self._local(request)
        except IndexLockedError as exc:
            raise IndexLockedError(f"{exc} — but {self._daemons}") from None

    def close(self) -> None:
        self._local.close()


class SessionRoute:
    """A long session's handler (MCP): the daemon while one serves us, this process
    otherwise. A daemon that goes away mid-session is replaced by in-process work; one that
    appears is used from the next call on (looked for at most every RECHECK_SECONDS)."""

    def __init__(self, settings: Settings, agent: str,
                 workspace: str | os.PathLike[str] | None = None, *,
                 daemon_timeout: float = 30.0,
                 notice: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self.agent = agent
        self.workspace = workspace
        self.daemon_timeout = daemon_timeout  # per request: a host must never hang on it
        self._notice = notice
        self._local: LocalHandler | None = None
        self._daemon: Handler | None = None
        self._checked_at = float("-inf")
        self._state_lock = threading.Lock()

    def _current(self) -> Handler | None:
        with self._state_lock:
            now = time.monotonic()
            if self._daemon is None and now - self._checked_at >= RECHECK_SECONDS:
                self._checked_at = now
                self._daemon = daemon_for(self.settings, self.agent, self.workspace,
                                          self.daemon_timeout)
                if self._daemon is not None:
                    _log().info("session_using_daemon")
            return self._daemon

    def _drop(self, daemon: Handler) -> None:
        with self._state_lock:
            if self._daemon is daemon:
                self._daemon = None
                self._checked_at = time.monotonic()
        daemon.close()

    def __call__(self, request: Request) -> Reply:
        from openmemd.client import DaemonNotRunning, RequestTimeout

        daemon = self._current()
        if daemon is not None:
            try:
                return daemon(request)
            except (DaemonNotRunning, RequestTimeout) as exc:
                self._drop(daemon)
                _log().warning("session_daemon_lost", error=str(exc))
                if isinstance(request, AddRequest):
                    # It may have written the note before it went away (a lost reply cannot
                    # be told from an unsent request): adding it here too could store it
                    # twice. The next call runs in process.
                    raise UnavailableError(
                        "the openmemd daemon went away while adding the note; it may or may "
                        "not have been written: search for it before adding it again") from None
        return self._local_handler()(request)

    def _local_handler(self) -> LocalHandler:
        with self._state_lock:
            if self._local is None:
                from openmemd.api.handler import LocalHandler
                from openmemd.progress import ProgressLine

                # a first index embeds between calls: its progress goes to stderr
                self._local = LocalHandler(self.settings, workspace=self.workspace,
                                           owner=self.agent, notice=self._notice,
                                           fill_progress=ProgressLine())
            return self._local

    def warm(self) -> None:
        """Start preparing this session's first call in a background thread, while the
        caller goes on (MCP: `initialize`, then the host deciding to call a tool): with no
        daemon, the local handler's index and embedding model (`LocalHandler.warm`); with
        one, the look-up only. A failure is logged at debug level: the first call meets it
        again and says what is wrong."""

        def run() -> None:
            try:
                if self._current() is None:
                    self._local_handler().warm(self.agent)
            except Exception as exc:  # the first call meets it too, and reports it
                _log().debug("session_warm_up_failed", error=f"{type(exc).__name__}: {exc}")

        # A daemon thread: a warm-up still loading never keeps a finished session alive.
        threading.Thread(target=run, name="openmemd-warm-up", daemon=True).start()

    def close(self) -> None:
        """The daemon's connection, and a local fill left running (what it embedded is kept),
        so none dies mid-write at interpreter exit."""
        with self._state_lock:
            daemon, self._daemon = self._daemon, None
            local, self._local = self._local, None
        for handler in (daemon, local):
            if handler is not None:
                handler.close()


def _log() -> Any:
    """The logger, imported when a session first logs (not on a command's light path)."""
    from openmemd.log import get_logger

    return get_logger(__name__)
