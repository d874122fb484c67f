"""What the command line reports besides hits: `status`, `workspace`, the relaxed-search note.

`status` asks the daemon only when one serves this workspace and state dir (see
`openmemd.discovery`); otherwise it describes the index on disk in-process and exits 2, because
no daemon keeps that index fresh, whatever else may be running.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from openmemd import __version__, discovery, paths
from openmemd.config import DEFAULT_AGENT, Settings
from openmemd.config.layers import config_files
from openmemd.errors import WorkspaceError
from openmemd.progress import describe

EXIT_OK, EXIT_DEGRADED, EXIT_NOT_RUNNING = 0, 1, 2


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def cmd_status(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.client import Client, DaemonNotRunning, RequestTimeout

    # --workspace is the workspace of --agent; an unknown --agent is a config error (exit 2).
    named = args.agent != DEFAULT_AGENT
    scope = [args.agent] if named else settings.agent_ids()
    lookup = discovery.find(settings, discovery.targets(settings, scope, args.workspace,
                                                        args.agent))
    if lookup.endpoint is None:
        return _status_offline(settings, args, scope, lookup)
    client = Client(lookup.endpoint, timeout=5.0 if not args.deep else 60.0)
    try:
        with client:
            reply = client.status(deep=args.deep, agent=args.agent if named else None)
    except (DaemonNotRunning, RequestTimeout) as exc:
        return _status_offline(settings, args, scope, discovery.Lookup(None), str(exc))
    healthy = reply.get("health") == "healthy"
    if args.json:
        _print_json({k: v for k, v in reply.items() if k != "ok"})
    else:
        print_status_text(reply)
    return EXIT_OK if healthy else EXIT_DEGRADED


def _status_offline(settings: Settings, args: argparse.Namespace, scope: list[str],
                    lookup: discovery.Lookup, reason: str = "") -> int:
    """No daemon serves this index: say so (exit 2) and still describe the index on disk."""
    from openmemd.api.handler import LocalHandler
    from openmemd.protocol.requests import StatusRequest

    local = LocalHandler(settings, workspace=args.workspace, owner=args.agent)
    agents: list[dict[str, Any]] = []
    for agent_id in scope:
        st = local(StatusRequest(agent=agent_id, deep=args.deep))["agents"][agent_id]
        agents.append(st)
    reply: dict[str, Any] = {
        "running": False, "health": "not running", "reason": reason or lookup.reason(),
        "endpoint": settings.server.endpoint or paths.default_endpoint(),
        "version": __version__, "configFile": settings.config_file or None,
        "configFiles": config_files(settings), "agents": agents}
    if lookup.others:
        reply["otherDaemons"] = [{"endpoint": s.endpoint, "pid": s.pid, "agents": s.agents}
                                 for s in lookup.others]
    if args.json:
        _print_json(reply)
    else:
        print_status_text(reply)
    return EXIT_NOT_RUNNING


def print_status_text(reply: dict[str, Any]) -> None:
    running = reply.get("running", True)
    daemon = (f"running (pid {reply.get('pid')}, up {reply.get('uptimeSeconds', 0):.0f}s)"
              if running else "not serving this workspace" if reply.get("otherDaemons")
              else "not running")
    print(f"openmemd {reply.get('version', __version__)} · daemon: {daemon}"
          f" · {reply.get('endpoint', '')}")
    print(f"Health: {reply.get('health')}")
    if not running and reply.get("reason"):
        print(f"  {reply['reason']}")
    for problem in reply.get("problems", []):
        print(f"  problem: {problem}")
    for note in reply.get("notes", []):
        print(f"  note: {note}")
    files = reply.get("configFiles") or [f for f in [reply.get("configFile")] if f]
    print(f"Config: {' + '.join(files) or 'none (built-in defaults)'}")
    agents = reply.get("agents", [])
    if isinstance(agents, dict):
        agents = list(agents.values())
    for a in agents:
        _print_agent(a)
    if reply.get("rssBytes"):
        print(f"\nRSS: {reply['rssBytes'] / 1048576:.0f} MiB")


def _store_line(store: dict[str, Any], db_path: object) -> str:
    """Where the index lives; for PostgreSQL also the versions and the namespaces."""
    line = str(store.get("location") or db_path)
    if store.get("backend") != "postgres":
        return line
    if store.get("error") or store.get("reachable") is False:
        return f"{line} · unreachable: {store.get('error', 'no answer')}"
    line += (f" · PostgreSQL {store.get('serverVersion')} · pgvector "
             f"{store.get('pgvectorVersion')}")
    searched = [n for n in store.get("searchNamespaces") or [] if n != store.get("namespace")]
    if searched:
        line += f" (also searching {', '.join(searched)})"
    if store.get("indexBuilding"):
        line += f" · building index {store['indexBuilding']} (searches go on meanwhile)"
    if store.get("indexBuildError"):
        line += f" · index build failed, retried at the next upkeep: {store['indexBuildError']}"
    return line


def _print_agent(a: dict[str, Any]) -> None:
    print(f"\nMemory ({a.get('agent')})")
    if a.get("error"):
        print(f"  Error: {a['error']}")
        return
    p = a.get("provider", {})
    files = a.get("files", {})
    vec = a.get("vector", {})
    cache = a.get("cache", {})
    print(f"  Workspace: {a.get('workspace')}")
    print(f"  Store: {_store_line(a.get('store') or {}, a.get('dbPath'))}")
    print(f"  Provider: {p.get('id')} (requested: {p.get('requested')}) · model "
          f"{p.get('model')}" + (f" · {p.get('dims')} dims" if p.get("dims") else ""))
    if p.get("unavailableReason"):
        print(f"  Provider unavailable: {p['unavailableReason']}")
    if a.get("indexError"):  # the counts below would read as an empty index
        print(f"  Index: {a['indexError']}")
    else:
        print(f"  Indexed: {files.get('indexed', 0)}/{files.get('onDisk', 0)} files · "
              f"{a.get('chunks', 0)} chunks · {a.get('pendingVectors', 0)} waiting for a "
              "vector")
    if files.get("stale"):
        print(f"  Stale: {files['stale']} files changed on disk since the last sync")
    vec_line = vec.get("mode", "none")
    if vec.get("reason"):
        vec_line += f" ({vec['reason']})"
    print(f"  Vector: {vec_line}" + (f" · {vec['dims']} dims" if vec.get("dims") else ""))
    print(f"  FTS: {'ready' if a.get('fts', {}).get('available') else 'unavailable'}"
          f" ({a.get('fts', {}).get('tokenizer', '')})")
    print(f"  Embedding cache: {'enabled' if cache.get('enabled') else 'disabled'} "
          f"({cache.get('entries', 0)} entries, cap {cache.get('maxEntries')})")
    for key, label in (("watcher", "Watcher"), ("queueDepth", "Queue")):
        if key in a:
            print(f"  {label}: {a[key]}")
    watch = a.get("watch") or {}
    if watch.get("overflows") or watch.get("watchFailures"):
        print(f"  Missed events: {watch.get('overflows', 0)} queue overflow(s), reconciled at "
              f"once; {watch.get('watchFailures', 0)} unwatchable directories, polled")
    if a.get("progress"):
        print(f"  Progress: {describe(a['progress'])}")
    last = a.get("lastSync", {})
    if last.get("at"):
        print(f"  Last sync: {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(last['at']))}"
              + (f" · error: {last['error']}" if last.get("error") else ""))
    dreaming = a.get("dreaming")
    if dreaming:
        nxt = "left to OpenClaw" if dreaming.get("leftToOpenClaw") else dreaming.get("nextRun")
        print(f"  Dreaming: next {nxt} · last "
              f"{(dreaming.get('lastSweep') or {}).get('finishedAt', 'never')}")
    if a.get("reindexNeeded"):
        print(f"  Rebuild pending: index built with different {', '.join(a['reindexNeeded'])}"
              " (next sync rebuilds it)")
    probe = a.get("probe")
    if probe:
        print("  Probe: " + (f"ok · {probe.get('results', 0)} results · {probe.get('ms')} ms"
                             if probe.get("ok") else
                             f"FAILED · {probe.get('error')} · {probe.get('ms')} ms"))


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


def nothing_note(min_score: float, nearest: dict[str, Any] | None) -> str:
    """What a search that found nothing says: the threshold, and the nearest miss if any."""
    if not nearest:
        return "No matches."
    return (f"nothing at min score {min_score:g}; nearest {nearest['score']:.2f} "
            f"{nearest['citation']} — lower --min-score to see it")


def relaxed_note(min_score: float) -> str:
    return (f"(relaxed: no result passed min score {min_score:g}; "
            "showing keyword matches)")
