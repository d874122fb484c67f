"""The daemon's lifecycle: start-up, the main loop (signals, systemd watchdog), shutdown.

Start-up order: logging -> endpoint check -> pid lock (one daemon per endpoint) -> every module
a request can need (preload.py: imported here, never first by request threads; the package's
files recorded, so `status` notices an upgrade under the daemon: install_watch.py) -> indexes ->
indexer threads (model warm-up and start-up reconcile queued on them, so the socket answers at
once) -> watchers -> ZeroMQ server -> scheduler -> READY=1.

Signals: SIGTERM/SIGINT stop (requests first, then the scheduler, watchers and indexers, which
finish the file they are writing; the socket file is removed; exit 0). SIGHUP reloads the
config file: log level and format, watch debounce, reconcile interval, query settings and the
dreaming schedule and gates apply at once; the endpoint, workers, message size, agents,
workspaces, state dir, sources, extra paths, chunking, embedding, cache, watch on/off, polling
and the file size cap need a restart (the daemon logs which changed settings were not applied).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import zmq

from openmemd import __version__
from openmemd.config import ConfigError, Settings, load_settings
from openmemd.config.layers import config_files
from openmemd.config.locate import config_signature
from openmemd.dashboard import Dashboard
from openmemd.errors import OpenmemdError, UnavailableError
from openmemd.log import configure_logging, get_logger
from openmemd.protocol.endpoint import (
    EndpointError,
    lock_path,
    parse_endpoint,
    prepare_private_dir,
    remove_endpoint_record,
    resolve_endpoint,
    write_endpoint_record,
)
from openmemd.protocol.replies import DashboardLink
from openmemd.protocol.status import SchedulerStatus
from openmemd.server import openclaw_side, sdnotify
from openmemd.server.agent import AgentRuntime, changed, open_memory_index
from openmemd.server.handlers import Dispatcher
from openmemd.server.install_watch import InstallWatch
from openmemd.server.lock import AlreadyRunning, PidLock
from openmemd.server.mcp_host import McpHost, socket_path
from openmemd.server.preload import preload
from openmemd.server.scheduler import Jobs, MaintenanceScheduler
from openmemd.server.zmq_server import ServerError, ZmqServer

log = get_logger(__name__)

CHECK_INTERVAL_S = 5.0
# Daemon-wide settings a reload cannot apply (each agent's own: agent.RESTART_NEEDED).
RESTART_NEEDED = ("workspace", "state_dir", "agents", "server", "dashboard")
# How long a thread may hold the GIL while another waits for it (Python's default: 5 ms). A
# search on a server-backed store runs its two legs on two threads; with the default, the leg
# whose answer has arrived waits up to 5 ms at a time for the other, busy scoring in Python
# (docs/benchmarks.md, "Figures behind the code's choices").
GIL_SWITCH_S = 0.001


def shorten_gil_switch() -> None:
    """The daemon's threads hand the GIL over within GIL_SWITCH_S (see there)."""
    sys.setswitchinterval(GIL_SWITCH_S)


def run_daemon(settings: Settings, *, foreground: bool = True, config_path: str | None = None,
               reload: Callable[[], Settings] | None = None) -> NoReturn:
    """Run until SIGTERM/SIGINT, then end the process: 0 on a clean stop, 1 when it cannot
    start.

    The daemon always stays in the foreground (service managers want that; `foreground` is
    accepted for the command line's `--foreground`). `reload` builds fresh settings on SIGHUP;
    by default the config file is re-read, keeping the workspace, state dir and endpoint.
    """
    del foreground
    configure_logging(settings)
    shorten_gil_switch()  # two search legs on two threads answer sooner
    # A long-lived process: every index checked whole when its writer opens, vectors searched
    # from memory (a daemon embedded in a test opens its indexes as a one-shot command does).
    daemon = Daemon(settings, reload=reload or _default_reload(settings, config_path),
                    long_lived=True)
    code = daemon.run()
    # The process ends here, without the interpreter's teardown: everything that matters is
    # closed or committed (one transaction per file), and that teardown -- hundreds of modules,
    # the MCP SDK's among them -- took 0.3-1.8 s of a stop, longer than the shutdown itself
    # (~0.03 s). After an unclean stop a writer thread may still be inside a long embedding
    # call, and the embedding pool's threads would hold a normal exit for as long.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _default_reload(settings: Settings, config_path: str | None) -> Callable[[], Settings]:
    def reload() -> Settings:
        path = config_path or settings.config_file or None
        return load_settings(path, overrides={
            "workspace": settings.workspace or None, "state_dir": settings.state_dir or None,
            "server.endpoint": settings.server.endpoint or None})
    return reload


class Daemon:
    def __init__(self, settings: Settings, *, reload: Callable[[], Settings] | None = None,
                 env: Mapping[str, str] | None = None, force_polling: bool = False,
                 long_lived: bool = False) -> None:
        self.settings = self._started_with = settings
        # the config file these settings were loaded from, as it was (taken after the load: a
        # change in between only makes a command check the file itself)
        self._config_checked = config_signature(settings.config_file)
        self._restart_needed: list[str] = []  # changed by reloads; applied at the next start
        self._long_lived = long_lived  # see MemoryIndex
        self._reload_fn = reload
        self._env = os.environ if env is None else env
        self._force_polling = force_polling
        self._wake = threading.Event()
        self._stop_requested = False
        self._reload_requested = False
        self.agents: dict[str, AgentRuntime] = {}
        self.server: ZmqServer | None = None
        self.scheduler: MaintenanceScheduler | None = None
        self.mcp: McpHost | None = None
        self.dashboard: Dashboard | None = None
        self._lock: PidLock | None = None
        self._ctx: zmq.Context[Any] | None = None
        self.ready = threading.Event()
        self._recorded_endpoint: str | None = None

    # -- public ---------------------------------------------------------------------------
    def run(self) -> int:
        self._install_signals()  # before start-up: a SIGTERM while starting is a clean stop
        try:
            self._start()
        except (AlreadyRunning, EndpointError, ServerError, ConfigError, OpenmemdError) as exc:
            log.error(str(exc), event_kind="startup_failed")
            self._shutdown()
            return 1
        code = self._main_loop()
        self._shutdown()
        log.info("openmemd stopped", exit_code=code)
        return code

    def request_stop(self) -> None:
        self._stop_requested = True
        self._wake.set()

    def request_reload(self) -> None:
        self._reload_requested = True
        self._wake.set()

    # -- start-up -------------------------------------------------------------------------
    def _start(self) -> None:
        s = self.settings
        started = time.monotonic()
        endpoint = parse_endpoint(resolve_endpoint(s.server.endpoint),
                                  allow_remote=s.server.allow_remote)
        lock_file = lock_path(endpoint)
        prepare_private_dir(lock_file.parent)
        self._lock = PidLock(lock_file)
        self._lock.acquire(f"on {endpoint.url}")
        log.info("openmemd starting", version=__version__, pid=os.getpid(),
                 endpoint=endpoint.url, config=s.config_file or None)
        # The package's files as loaded, then the rest of it, before any thread of ours
        # starts: imports on one thread only.
        install = InstallWatch()
        not_installed = preload()
        log.debug("modules preloaded", not_installed=not_installed or None)

        for agent_id in s.agent_ids():
            agent = AgentRuntime(agent_id, s, force_polling=self._force_polling,
                                 opener=functools.partial(open_memory_index,
                                                          long_lived=self._long_lived))
            agent.open()
            self.agents[agent_id] = agent
        if all(a.index is None for a in self.agents.values()):
            errors = "; ".join(f"{a.agent_id}: {a.error}" for a in self.agents.values())
            raise UnavailableError(f"no agent could be opened ({errors})")
        for agent in self.agents.values():
            agent.start()
        openclaw_side.log_start(s, self.agents)

        self.scheduler = MaintenanceScheduler(s, Jobs(
            reconcile=self._job_reconcile, prune=lambda: self._job_writer("prune-cache"),
            checkpoint=lambda: self._job_writer("checkpoint"), dream=self._job_dream))
        dispatcher = Dispatcher(
            self.agents, endpoint=endpoint.url, watch_enabled=lambda: self.settings.sync.watch,
            scheduler_info=self._scheduler_info, server_info=self._server_info,
            config_file=s.config_file, config_files=lambda: config_files(self.settings),
            notes=self._notes,
            mcp_socket=lambda: self.mcp.advertised() if self.mcp is not None else None,
            install_problems=install.problems, config_checked=lambda: self._config_checked,
            dashboard=self._dashboard_link)
        self._ctx = zmq.Context()
        self.server = ZmqServer(endpoint, dispatcher, workers=s.server.workers,
                                max_message_bytes=s.server.max_message_bytes, context=self._ctx)
        self.server.start()
        if write_endpoint_record(s.state_path(), endpoint.url) is not None:
            self._recorded_endpoint = endpoint.url
        self.scheduler.start()
        self._start_dashboard(dispatcher)
        seconds = round(time.monotonic() - started, 3)
        sdnotify.notify(f"READY=1\nSTATUS=serving {endpoint.url}\nMAINPID={os.getpid()}",
                        self._env)
        log.info("openmemd ready", seconds=seconds, agents=list(self.agents),
                 endpoint=endpoint.url)
        self.ready.set()
        for agent in self.agents.values():
            if agent.index is not None:
                agent.index.warm_store()
        # After READY: the SDK's import (seconds of CPU) runs in the background.
        self.mcp = McpHost(socket_path(endpoint), dispatcher, self.agents)
        self.mcp.start()

    def _start_dashboard(self, dispatcher: Dispatcher) -> None:
        """The web dashboard on loopback (`[dashboard] port`, 0: off). A port another program
        holds is logged, not fatal: the memory is served without its dashboard."""
        port = self.settings.dashboard.port
        if not port:
            return
        try:
            self.dashboard = Dashboard(dispatcher, port, self.settings.state_path())
        except OSError as exc:
            log.warning("dashboard not started", port=port, error=str(exc))
            return
        self.dashboard.start()

    def _dashboard_link(self) -> DashboardLink | None:
        board = self.dashboard
        return DashboardLink(board.url, str(board.token_file)) if board is not None else None

    def _install_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # embedded (tests): use request_stop() / request_reload()
        signal.signal(signal.SIGTERM, lambda *_: self.request_stop())
        signal.signal(signal.SIGINT, lambda *_: self.request_stop())
        if hasattr(signal, "SIGHUP"):
            signal.signal(signal.SIGHUP, lambda *_: self.request_reload())

    # -- main loop ------------------------------------------------------------------------
    def _main_loop(self) -> int:
        wd_interval = sdnotify.watchdog_interval(self._env)
        tick = min(CHECK_INTERVAL_S, wd_interval) if wd_interval else CHECK_INTERVAL_S
        next_wd = 0.0
        next_check = time.monotonic() + CHECK_INTERVAL_S
        while True:
            now = time.monotonic()
            if wd_interval and now >= next_wd:
                next_wd = now + wd_interval
                self._feed_watchdog()
            if now >= next_check:
                next_check = now + CHECK_INTERVAL_S
                if self.server is not None and not self.server.is_alive():
                    log.error("request server thread died; exiting so the service manager "
                              "restarts openmemd")
                    return 1
                for agent in self.agents.values():
                    agent.check()
            timeout = max(0.05, min(next_check, next_wd if wd_interval else next_check)
                          - time.monotonic())
            self._wake.wait(min(timeout, tick))
            self._wake.clear()
            if self._stop_requested:
                return 0
            if self._reload_requested:
                self._reload_requested = False
                self._reload()

    def _feed_watchdog(self) -> bool:
        """WATCHDOG=1 only while requests are served: the I/O loop turns and every request
        worker is alive and not stuck. Otherwise systemd restarts the daemon."""
        stalled = self.server.stalled() if self.server is not None else ["no request server"]
        if stalled:
            log.error("requests are not being served; not feeding the systemd watchdog",
                      problems=stalled)
            return False
        return sdnotify.notify("WATCHDOG=1", self._env)

    def _reload(self) -> None:
        if self._reload_fn is None:
            return
        try:
            new = self._reload_fn()
        except (ConfigError, OpenmemdError) as exc:
            log.error("reload failed; keeping the current settings", error=str(exc))
            return
        old = self.settings
        self._config_checked = config_signature(new.config_file)
        self.settings = dataclasses.replace(old, **{
            k: getattr(new, k) for k in ("query", "sync", "dreaming", "log", "citations",
                                         "loaded")})  # loaded: openclaw.json re-read too
        configure_logging(self.settings)
        for agent in self.agents.values():
            agent.reload(self.settings)
        if self.scheduler is not None:
            self.scheduler.reload(self.settings)
        # Compared with what runs (the start-up settings), not with the last reload's.
        pending = changed(self._started_with, new, RESTART_NEEDED)
        pending += [f"{a.agent_id}: {key}" for a in self.agents.values()
                    for key in a.restart_needed]
        self._restart_needed = pending
        log.info("configuration reloaded", restart_needed_for=pending or None)

    def _notes(self) -> list[str]:
        pending = self._restart_needed
        return ([f"changed, applied at the next restart: {', '.join(pending)}"] if pending
                else []) + openclaw_side.notes(self.settings, self.agents)

    # -- scheduled jobs -------------------------------------------------------------------
    def _job_reconcile(self) -> None:
        for agent in self.agents.values():
            if agent.indexer is not None:
                agent.indexer.request_reconcile("periodic")

    def _job_writer(self, name: str) -> None:
        for agent in self.agents.values():
            if agent.indexer is None:
                continue
            if name == "prune-cache":
                agent.indexer.run_job(name, lambda ix: ix.prune_cache())
            else:
                agent.indexer.run_job(name, lambda ix: ix.checkpoint())

    def _job_dream(self) -> None:
        for agent in self.agents.values():
            if agent.index is None or not openclaw_side.dreams_here(
                    agent.settings, agent.agent_id, agent.workspace):
                continue  # OpenClaw dreams there: one dreamer per MEMORY.md
            try:
                reply = agent.dream("all", False)
                log.info("dreaming sweep done", agent=agent.agent_id,
                         promoted=len(reply.result.promoted))
            except UnavailableError as exc:
                log.info("dreaming skipped", agent=agent.agent_id, reason=str(exc))
            except Exception:
                log.exception("dreaming sweep failed", agent=agent.agent_id)

    def _scheduler_info(self) -> SchedulerStatus:
        if self.scheduler is None:
            return SchedulerStatus(running=False, jobs={})
        return SchedulerStatus(running=self.scheduler.running, jobs=self.scheduler.next_runs())

    def _server_info(self) -> dict[str, Any]:
        return self.server.stats() if self.server is not None else {}

    # -- shutdown -------------------------------------------------------------------------
    def _shutdown(self) -> None:
        sdnotify.notify("STOPPING=1", self._env)
        started = time.monotonic()
        if self.mcp is not None:
            self.mcp.stop()
        if self.dashboard is not None:
            self.dashboard.stop()
        if self.server is not None:
            self.server.stop(timeout=3.0)
        if self._recorded_endpoint is not None:
            remove_endpoint_record(self.settings.state_path(), self._recorded_endpoint)
        if self.scheduler is not None:
            self.scheduler.shutdown()
        for agent in self.agents.values():
            agent.stop(timeout=5.0)
        if self._ctx is not None:
            if self.server is None or self.server.threads_done():
                self._ctx.term()  # every socket has LINGER 0: returns at once
            self._ctx = None
        if self._lock is not None:
            self._lock.release()
        log.info("shutdown complete", seconds=round(time.monotonic() - started, 3))


def main() -> int:  # pragma: no cover - `python -m openmemd.server.daemon` for debugging
    return run_daemon(load_settings())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
