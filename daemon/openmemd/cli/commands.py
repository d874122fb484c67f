"""The `openmemd` commands, as they run in this process with the full settings.

`search`, `status`, `index`, `get`, `dream` and `context` talk to a running daemon only when
it serves this agent's workspace and state dir (`openmemd.api.route`), and otherwise work
in-process on the same files (taking the index's writer lock for anything that writes). The
common case, a daemon answering search, get, context or status, takes the light path of
`cli/fast.py` first (`cli/main.py`); this module is what runs when that path cannot.
Expected failures print one line on stderr and exit non-zero; only bugs print a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openmemd.cli import config_cmd, mcp_cmd, store_cmd
from openmemd.cli.ask import ask, handler_for
from openmemd.cli.fast import (
    EXIT_OK,
    EXIT_USAGE,
    context_request,
    get_request,
    guarded,
    search_request,
    show_context,
    show_get,
)
from openmemd.cli.hits import show_search
from openmemd.cli.output import print_json
from openmemd.cli.parser import load_settings
from openmemd.config import ConfigError, Settings
from openmemd.errors import OpenmemdError
from openmemd.progress import ProgressBar, ProgressLine
from openmemd.protocol.replies import (
    ContextReply,
    DemoteReply,
    DreamReply,
    DreamResult,
    GetReply,
    MemoryReply,
    SearchReply,
    SyncReply,
    SyncSummary,
    expect,
)
from openmemd.protocol.requests import (
    DemoteRequest,
    DreamRequest,
    MemoryRequest,
    SyncRequest,
    UndoRequest,
)


# -- commands -----------------------------------------------------------------------------------
def cmd_search(settings: Settings, args: argparse.Namespace) -> int:
    # Without a daemon, a search catches the index up first (keyword rows): shown as it goes.
    tty = sys.stderr.isatty() and not args.json
    handler = handler_for(settings, args, progress=ProgressBar(True) if tty else ProgressLine())
    try:  # the results are shown before closing: a fill left running stops at its batch
        code = show_search(args, expect(handler(search_request(args)), SearchReply),
                           lambda: settings)
        sys.stdout.flush()
        return code
    finally:
        handler.close()


def cmd_index(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.progress import ProgressBar

    bar = ProgressBar(sys.stderr.isatty() and not args.json)
    handler = handler_for(settings, args, progress=bar)
    try:
        reply = expect(handler(SyncRequest(agent=args.agent, force=args.force, wait=True)),
                       SyncReply)
    finally:
        handler.close()
    report = reply.report or SyncSummary()  # a sync waited for has its report
    if args.json:
        print_json(report.to_json())
        return EXIT_OK
    print(f"Memory index updated ({args.agent}): {report.scanned} files scanned, "
          f"{report.indexed} indexed, {report.unchanged} unchanged, "
          f"{report.deleted} deleted, {report.chunks} chunks written"
          + (f", {report.vectors_embedded} embedded" if report.vectors_embedded else "")
          + (" (full rebuild)" if report.reindexed else "") + ".")
    if report.vectors_pending:  # a daemon embeds them now; in process, warnings say why
        print(f"  {report.vectors_pending} chunks still waiting for a vector: keyword search "
              "has them already; `openmemd status` shows the progress.")
    for issue in report.not_followed + report.skipped:
        print(f"  skipped {issue.path}: {issue.reason}", file=sys.stderr)
    for issue in report.warnings:
        print(f"  warning {issue.path}: {issue.reason}", file=sys.stderr)
    return EXIT_OK


def cmd_get(settings: Settings, args: argparse.Namespace) -> int:
    return show_get(args, ask(settings, args, get_request(args), GetReply))


def cmd_status(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.cli.report import cmd_status as status

    return status(settings, args)


def cmd_doctor(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.cli.doctor import cmd_doctor as doctor

    return doctor(settings, args)


def cmd_workspace(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.cli.report import cmd_workspace as workspace

    return workspace(settings, args)


def cmd_dream(settings: Settings, args: argparse.Namespace) -> int:
    if args.action == "explain":
        if not args.selector:
            raise OpenmemdError("dream explain needs a key, a path or a text fragment")
        from openmemd.api.dreams import explain_dream

        found = explain_dream(_workspace(settings, args), args.selector, settings.dreaming,
                              args.phase)
        if args.json:
            print_json([c.to_dict() for c in found])
        else:
            print("\n\n".join(c.format_text() for c in found) if found
                  else "No recall entry matches that key, path or text.")
        return EXIT_OK
    result = ask(settings, args, DreamRequest(agent=args.agent, phase=args.phase,
                                              dry_run=args.dry_run), DreamReply).result
    if args.json:
        print_json(result.to_json())
    else:
        _print_dream_text(result)
    return EXIT_OK


def cmd_memory(settings: Settings, args: argparse.Namespace) -> int:
    if args.action in ("demote", "undo"):
        if not args.key:
            raise OpenmemdError(f"memory {args.action} needs the entry's key (see `openmemd "
                                "memory`)")
        request = (DemoteRequest(args.key, args.agent) if args.action == "demote"
                   else UndoRequest(args.key, args.agent))
        moved = ask(settings, args, request, DemoteReply)
        if args.json:
            print_json(moved.to_json())
        elif args.action == "demote":
            print(f"demoted {moved.key} to {moved.archive} (undo: openmemd memory undo "
                  f"{moved.key})")
        else:
            print(f"restored {moved.key} into MEMORY.md from {moved.archive}")
        return EXIT_OK
    view = ask(settings, args, MemoryRequest(args.agent), MemoryReply)
    if args.json:
        print_json(view.to_json())
        return EXIT_OK
    print(f"{view.path}: {view.chars} of {view.budget_chars} characters "
          f"({100 * view.chars // max(1, view.budget_chars)}% of the bootstrap budget)")
    for entry in view.entries:
        if entry.kind != "promoted":
            print(f"  {entry.line:>4}  {entry.text}")
            continue
        print(f"  {entry.line:>4}  {entry.text}\n"
              f"        promoted {entry.promoted_at or '?'} from {entry.source or '?'}, score "
              f"{entry.score}, {entry.recalls} recalls; key {entry.key}\n"
              f"        recalled by: {'; '.join(entry.queries) or '-'}")
    return EXIT_OK


def _workspace(settings: Settings, args: argparse.Namespace) -> Path:
    if args.workspace:
        return Path(args.workspace).expanduser()
    return settings.workspace_for(args.agent)


def _print_dream_text(result: DreamResult) -> None:
    light, rem, deep = result.light, result.rem, result.deep
    dry = result.dry_run
    print(f"Dreaming {result.day} ({result.timezone})"
          + (" — dry run, nothing written" if dry else ""))
    if light.ran:
        print(f"  light: {light.ingested_files} notes ingested, "
              f"{light.staged} candidates staged")
    if rem.ran:
        themes = ", ".join(t.tag for t in rem.themes[:5]) or "none"
        print(f"  rem: {rem.entries} recent entries, themes: {themes}; "
              f"{rem.truths} possible lasting truths")
    if deep.ran:
        promoted = (f"would promote {deep.promoted}" if dry else f"{deep.promoted} promoted")
        print(f"  deep: {deep.eligible} eligible, {promoted} into MEMORY.md"
              + (" (size cap reached)" if deep.size_capped else ""))
    for p in result.promoted:
        print(f"    + {p.key} score={p.score}")
    for s in deep.skipped:
        print(f"    - skipped {s.key}: {s.reason}")
    for path in result.report_paths:
        print(f"  report: {path}")
    for message in result.messages:
        print(f"  note: {message}")


def cmd_context(settings: Settings, args: argparse.Namespace) -> int:
    return show_context(args, ask(settings, args, context_request(args), ContextReply))


def cmd_connect(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.cli import connect_cmd  # tomlkit and the agents' modules: only here

    return connect_cmd.run(settings, args)


def cmd_dashboard(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.cli import dashboard_cmd

    return dashboard_cmd.run(settings, args)


def cmd_run(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.server.daemon import run_daemon

    return run_daemon(settings, config_path=args.config)


def cmd_service(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.server import service

    if args.action == "install":  # the installed daemon serves what this command line names
        options = service.run_options(
            {"--config": args.config, "--workspace": args.workspace,
             "--state-dir": args.state_dir},
            [settings.state_path(), *(settings.workspace_for(a) for a in settings.agent_ids())])
        return service.install(dry_run=args.dry_run, options=options)
    action: Callable[..., Any] = getattr(service, args.action)
    return int(action(dry_run=args.dry_run) or 0) if args.action != "status" else int(
        action() or 0)


COMMANDS: dict[str, Callable[[Settings, argparse.Namespace], int]] = {
    "run": cmd_run, "status": cmd_status, "doctor": cmd_doctor, "index": cmd_index,
    "search": cmd_search, "get": cmd_get, "dream": cmd_dream, "service": cmd_service,
    "memory": cmd_memory,
    "workspace": cmd_workspace,
    "config": config_cmd.run, "add": mcp_cmd.cmd_add, "mcp": mcp_cmd.cmd_mcp,
    "store": store_cmd.run, "context": cmd_context,
    "connect": cmd_connect, "disconnect": cmd_connect, "dashboard": cmd_dashboard,
}


def run(args: argparse.Namespace) -> int:
    """Run the parsed command with the full settings (`cli/main.py`)."""
    try:
        settings = load_settings(args)
    except ConfigError as exc:
        if args.command == "doctor":  # naming what is wrong is its job: one failed check
            from openmemd.cli.doctor import broken_config

            return broken_config(args, exc)
        print(f"openmemd: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from openmemd.protocol.params import usage_problem

    problem = usage_problem(args.command, vars(args), settings.server.endpoint)
    if problem:
        print(f"openmemd: {problem}", file=sys.stderr)
        return EXIT_USAGE
    from openmemd.log import configure_logging, set_level

    configure_logging(settings, log_layer_warning=args.command == "run",  # the daemon logs it
                      one_shot=args.command not in ("run", "mcp"))  # those two serve
    if args.command not in ("run", "doctor") and settings.loaded is not None \
            and settings.loaded.warning:  # the daemon logs it, doctor reports it as a check
        print(f"openmemd: warning: {settings.loaded.warning}", file=sys.stderr)
    if args.command != "run" and not args.log_level:
        set_level("warning")  # one-shot commands: only what needs the user's attention
    return guarded(lambda: COMMANDS[args.command](settings, args))
