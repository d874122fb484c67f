"""What the command line reports besides hits: `status`, `workspace`, the relaxed-search note.

`status` asks the daemon only when one serves this workspace and state dir (see
`openmemd.api.route`); otherwise it describes the index on disk in-process and exits 2, because
no daemon keeps that index fresh, whatever else may be running.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from openmemd import __version__, paths
from openmemd.api import route
from openmemd.api.health import HEALTHY
from openmemd.cli.output import print_json
from openmemd.config.locate import DEFAULT_AGENT, Located
from openmemd.errors import WorkspaceError
from openmemd.progress import describe
from openmemd.protocol.status import (
    AgentStatus,
    DaemonStatus,
    IndexStatus,
    OtherDaemon,
    StoreFacts,
)

if TYPE_CHECKING:  # the records are loaded only when the command runs in process
    from openmemd.config import Settings

EXIT_OK, EXIT_DEGRADED, EXIT_NOT_RUNNING = 0, 1, 2


def cmd_status(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.client import DaemonNotRunning, RequestTimeout

    scope = _scope(settings, args)
    lookup = _lookup(settings, args, scope)
    if lookup.endpoint is None:
        return _status_offline(settings, args, scope, lookup)
    try:
        return _show_daemon_status(lookup.endpoint, args)
    except (DaemonNotRunning, RequestTimeout) as exc:
        return _status_offline(settings, args, scope, route.Lookup(None), str(exc))


def daemon_status(where: Located, args: argparse.Namespace) -> int | None:
    """`status` answered by the daemon serving these agents (`cli/fast.py`); None when none
    does, or it went away: then `cmd_status` describes the index on disk."""
    from openmemd.client import DaemonNotRunning, RequestTimeout

    lookup = _lookup(where, args, _scope(where, args))
    if lookup.endpoint is None:
        return None
    try:
        return _show_daemon_status(lookup.endpoint, args)
    except (DaemonNotRunning, RequestTimeout):
        return None


def _scope(settings: Settings | Located, args: argparse.Namespace) -> list[str]:
    return [args.agent] if args.agent != DEFAULT_AGENT else settings.agent_ids()


def _lookup(settings: Settings | Located, args: argparse.Namespace,
            scope: list[str]) -> route.Lookup:
    # --workspace is the workspace of --agent; an unknown --agent is a config error (exit 2).
    return route.daemons_serving(settings, scope, args.workspace, args.agent)


def _show_daemon_status(endpoint: str, args: argparse.Namespace) -> int:
    from openmemd.client import Client

    named = args.agent != DEFAULT_AGENT
    with Client(endpoint, timeout=5.0 if not args.deep else 60.0) as client:
        reply = client.status(deep=args.deep, agent=args.agent if named else None)
    status = DaemonStatus.from_json(reply)
    if args.json:  # what the daemon said, as it said it
        print_json(reply)
    else:
        print_status_text(status)
    return EXIT_OK if status.health == HEALTHY else EXIT_DEGRADED


def _status_offline(settings: Settings, args: argparse.Namespace, scope: list[str],
                    lookup: route.Lookup, reason: str = "") -> int:
    """No daemon serves this index: say so (exit 2) and still describe the index on disk."""
    from openmemd.api.handler import LocalHandler
    from openmemd.config.layers import config_files
    from openmemd.protocol.requests import StatusRequest

    local = LocalHandler(settings, workspace=args.workspace, owner=args.agent)
    agents = tuple(a for agent_id in scope
                   for a in local.status(StatusRequest(agent=agent_id, deep=args.deep)).agents)
    status = DaemonStatus(
        running=False, health="not running", reason=reason or lookup.reason(),
        version=__version__, endpoint=settings.server.endpoint or paths.default_endpoint(),
        config_file=settings.config_file or None, config_files=tuple(config_files(settings)),
        agents=agents, other_daemons=tuple(
            OtherDaemon(s.endpoint, s.pid, s.agents) for s in lookup.others) or None)
    if args.json:
        out = status.to_json()
        # without a daemon, `status --json` has always listed the agents
        out["agents"] = list(out["agents"].values())
        print_json(out)
    else:
        print_status_text(status)
    return EXIT_NOT_RUNNING


def print_status_text(status: DaemonStatus) -> None:
    daemon = (f"running (pid {status.pid}, up {status.uptime_seconds or 0:.0f}s)"
              if status.running else "not serving this workspace" if status.other_daemons
              else "not running")
    print(f"openmemd {status.version or __version__} · daemon: {daemon}"
          f" · {status.endpoint or ''}")
    print(f"Health: {status.health}")
    if not status.running and status.reason:
        print(f"  {status.reason}")
    for problem in status.problems or ():
        print(f"  problem: {problem}")
    for note in status.notes or ():
        print(f"  note: {note}")
    files = status.config_files or [f for f in [status.config_file] if f]
    print(f"Config: {' + '.join(files) or 'none (built-in defaults)'}")
    for agent in status.agents:
        _print_agent(agent)
    if status.rss_bytes:
        print(f"\nRSS: {status.rss_bytes / 1048576:.0f} MiB")


def _store_line(store: StoreFacts, db_path: str | None) -> str:
    """Where the index lives; for PostgreSQL also the versions and the namespaces (the
    backend's own facts)."""
    line = str(store.location or db_path)
    if store.backend != "postgres":
        return line
    fact = store.fact
    if store.error or fact("reachable") is False:
        return f"{line} · unreachable: {store.error or 'no answer'}"
    line += f" · PostgreSQL {fact('serverVersion')} · pgvector {fact('pgvectorVersion')}"
    searched = [n for n in fact("searchNamespaces") or [] if n != fact("namespace")]
    if searched:
        line += f" (also searching {', '.join(searched)})"
    if fact("indexBuilding"):
        line += f" · building index {fact('indexBuilding')} (searches go on meanwhile)"
    if fact("indexBuildError"):
        line += (" · index build failed, retried at the next upkeep: "
                 f"{fact('indexBuildError')}")
    return line


def _print_agent(a: AgentStatus) -> None:
    print(f"\nMemory ({a.agent})")
    if a.error:
        print(f"  Error: {a.error}")
        return
    print(f"  Workspace: {a.workspace}")
    ix = a.index
    if ix is not None:
        _print_index(ix)
    elif a.index_error:
        print(f"  Index: {a.index_error}")
    if a.watch is not None:
        print(f"  Watcher: {a.watch.summary}")
    if a.indexer is not None:
        print(f"  Queue: {a.indexer.queue_depth}")
    watch = a.watch
    if watch is not None and (watch.overflows or watch.watch_failures):
        print(f"  Missed events: {watch.overflows} queue overflow(s), reconciled at "
              f"once; {watch.watch_failures} unwatchable directories, polled")
    if a.indexer is not None and a.indexer.progress:
        print(f"  Progress: {describe(a.indexer.progress)}")
    if ix is not None and ix.last_sync.at:
        error = ix.last_sync.error
        print(f"  Last sync: {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(ix.last_sync.at))}"
              + (f" · error: {error}" if error else ""))
    dreaming = a.dreaming
    if dreaming is not None:
        nxt = "left to OpenClaw" if dreaming.left_to_openclaw else dreaming.next_run
        last = dreaming.last_sweep.finished_at if dreaming.last_sweep else "never"
        print(f"  Dreaming: next {nxt} · last {last}")
    if ix is not None and ix.reindex_needed:
        print(f"  Rebuild pending: index built with different {', '.join(ix.reindex_needed)}"
              " (next sync rebuilds it)")
    probe = a.probe
    if probe is not None:
        print("  Probe: " + (f"ok · {probe.results or 0} results · {probe.ms} ms" if probe.ok
                             else f"FAILED · {probe.error} · {probe.ms} ms"))


def _print_index(ix: IndexStatus) -> None:
    p, files, vec, cache = ix.provider, ix.files, ix.vector, ix.cache
    print(f"  Store: {_store_line(ix.store, ix.db_path)}")
    print(f"  Provider: {p.id} (requested: {p.requested}) · model {p.model}"
          + (f" · {p.dims} dims" if p.dims else ""))
    if p.unavailable_reason:
        print(f"  Provider unavailable: {p.unavailable_reason}")
    if ix.index_error:  # the counts below would read as an empty index
        print(f"  Index: {ix.index_error}")
    else:
        print(f"  Indexed: {files.indexed}/{files.on_disk} files · {ix.chunks} chunks · "
              f"{ix.pending_vectors} waiting for a vector")
    if files.stale:
        print(f"  Stale: {files.stale} files changed on disk since the last sync")
    for skipped in ix.skipped:
        print(f"  Not indexed: {skipped.path}: {skipped.reason}")
    vec_line = vec.mode + (f" ({vec.reason})" if vec.reason else "")
    print(f"  Vector: {vec_line}" + (f" · {vec.dims} dims" if vec.dims else ""))
    print(f"  FTS: {'ready' if ix.fts.available else 'unavailable'} ({ix.fts.tokenizer})")
    print(f"  Embedding cache: {'enabled' if cache.enabled else 'disabled'} "
          f"({cache.entries} entries, cap {cache.max_entries})")
    for agent in ix.connected_agents:
        print(f"  Agent {agent.agent}: {agent.summary}")


def cmd_workspace(settings: Settings, args: argparse.Namespace) -> int:
    """Print the agent's workspace, creating its `memory/` folder, so a shell can write a note
    without knowing the platform or whether OpenClaw's workspace exists."""
    configured = settings.workspace_for(args.agent)  # an unknown agent is a config error
    ws = Path(args.workspace).expanduser() if args.workspace else configured
    if not ws.is_dir() and (args.workspace or ws != paths.default_workspace()):
        raise WorkspaceError(f"workspace {ws} does not exist or is not a directory")
    try:
        (ws / "memory").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(f"cannot create {ws / 'memory'}: {exc.strerror}") from None
    print(ws.absolute())
    return EXIT_OK
