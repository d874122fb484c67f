"""The `openmemd` command line: thin over the library API and the daemon client.

`search`, `status`, `index`, `get`, `dream` and `context` talk to a running daemon only when
it serves this agent's workspace and state dir (`openmemd.discovery`), and otherwise work
in-process on the same files (taking the index's writer lock for anything that writes).
Expected failures print one line on stderr and exit non-zero; only bugs print a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openmemd import __version__
from openmemd.cli import config_cmd, mcp_cmd, store_cmd
from openmemd.cli.ask import ask, handler_for
from openmemd.cli.hits import hit_lines
from openmemd.config import DEFAULT_AGENT, PHASE_CHOICES, ConfigError, Settings, load_settings
from openmemd.errors import OpenmemdError
from openmemd.progress import ProgressBar, ProgressLine
from openmemd.protocol import params
from openmemd.protocol.requests import (
    ContextRequest,
    DreamRequest,
    GetRequest,
    SearchRequest,
    SyncRequest,
)

if TYPE_CHECKING:
    pass

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_DEGRADED, EXIT_NOT_RUNNING = 1, 2


# -- argument parsing ---------------------------------------------------------------------------
def _common(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("common options")
    g.add_argument("--config", metavar="FILE", help="config file (default: $OPENMEMD_CONFIG or "
                   "the platform config file)")
    g.add_argument("--agent", metavar="ID", default=DEFAULT_AGENT, help="agent id (default: main)")
    g.add_argument("--workspace", metavar="DIR", help="workspace directory")
    g.add_argument("--state-dir", metavar="DIR", help="where the index lives")
    g.add_argument("--endpoint", metavar="URL", help="daemon endpoint (ipc://… or tcp://…)")
    g.add_argument("--log-level", choices=("debug", "info", "warning", "error"),
                   help="log level")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="openmemd", description="Local memory daemon for AI agents: Markdown memory, "
        "hybrid search, nightly dreaming.")
    parser.add_argument("--version", action="version", version=f"openmemd {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("run", help="run the daemon (what the service units start)")
    p.add_argument("--foreground", action="store_true",
                   help="stay attached to the terminal (the default; kept for service units)")
    _common(p)

    p = sub.add_parser("status", help="health of the daemon and the index")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--deep", action="store_true", help="also embed a probe and run a test query")
    _common(p)

    p = sub.add_parser("doctor", help="check the set-up, each problem with its fix")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _common(p)

    p = sub.add_parser("index", help="sync the index with the workspace now")
    p.add_argument("--force", action="store_true",
                   help="rebuild the whole index from the Markdown (cached embeddings reused)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _common(p)

    p = sub.add_parser("search", help="search the memory")
    p.add_argument("query", nargs="+", help="what to look for")
    p.add_argument("--max-results", type=int, metavar="N", help="results to return (default 6)")
    p.add_argument("--min-score", type=float, metavar="X", help="score threshold 0..1 "
                   "(default 0.35)")
    p.add_argument("--source", action="append", choices=("memory", "sessions"), dest="sources",
                   help="restrict to a source (repeatable)")
    p.add_argument("--explain", action="store_true", help="show how each score was made")
    p.add_argument("--today", metavar="YYYY-MM-DD", help='the day "yesterday" and "last week" '
                   "count from (default: today)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _common(p)

    p = sub.add_parser("get", help="print lines of a memory file")
    p.add_argument("path", help="workspace-relative path or a search hit's citation, e.g. "
                   "memory/2026-01-02.md, memory/2026-01-02.md:3-9 or MEMORY.md#L3-L9")
    p.add_argument("--from", dest="from_line", type=int, metavar="N",
                   help="first line (1-based); with --lines, replaces a citation's range")
    p.add_argument("--lines", type=int, metavar="N", help="number of lines")
    p.add_argument("--namespace", metavar="NS", help="read a hit from this other searched "
                   "namespace (PostgreSQL), as the shared index stores it")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _common(p)

    p = sub.add_parser("dream", help="run dreaming now, or explain a candidate")
    p.add_argument("action", nargs="?", choices=("run", "explain"), default="run",
                   help="run a sweep (default) or explain a candidate")
    p.add_argument("selector", nargs="?", help="for explain: a key, a path or a text fragment")
    p.add_argument("--phase", choices=PHASE_CHOICES, default="all")
    p.add_argument("--dry-run", action="store_true", help="compute everything, write nothing")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _common(p)

    p = sub.add_parser("context", help="print the session's startup context (MEMORY.md, "
                       "USER.md, today's and yesterday's notes) for an agent's prompt")
    p.add_argument("--today", metavar="YYYY-MM-DD", help="the day a session starts (default: "
                   "today in the dreaming timezone)")
    p.add_argument("--json", action="store_true", help="machine-readable output: the files, "
                   "their sizes, what was truncated, the days and the text")
    _common(p)

    p = sub.add_parser("service", help="install the systemd user unit or launchd agent")
    p.add_argument("action", choices=("install", "uninstall", "status"))
    p.add_argument("--dry-run", action="store_true", help="print what would be written and run")
    _common(p)

    p = sub.add_parser("workspace", help="print the workspace path (creates its memory/)")
    _common(p)
    config_cmd.add_parser(sub, _common)
    mcp_cmd.add_parsers(sub, _common)
    store_cmd.add_parser(sub, _common)
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {"workspace": args.workspace, "state_dir": args.state_dir,
                 "server.endpoint": args.endpoint, "log.level": args.log_level}
    return load_settings(args.config, overrides=overrides)


# -- output helpers -----------------------------------------------------------------------------
def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


# -- commands -----------------------------------------------------------------------------------
def cmd_search(settings: Settings, args: argparse.Namespace) -> int:
    explain = args.explain or not args.json  # text output marks the relaxed fallback
    # Without a daemon, a search catches the index up first (keyword rows): shown as it goes.
    tty = sys.stderr.isatty() and not args.json
    handler = handler_for(settings, args, progress=ProgressBar(True) if tty else ProgressLine())
    try:  # the results are shown before closing: a fill left running stops at its batch
        code = _show_search(settings, args, handler(SearchRequest(
            query=" ".join(args.query), agent=args.agent, max_results=args.max_results,
            min_score=args.min_score, sources=tuple(args.sources) if args.sources else None,
            explain=explain, today=params.today(args.today) if args.today else None)))
        sys.stdout.flush()
        return code
    finally:
        handler.close()


def _show_search(settings: Settings, args: argparse.Namespace, reply: dict[str, Any]) -> int:
    results = reply["results"]
    meta = {k: v for k, v in reply.items() if k != "results"}
    if meta.get("degraded") and not args.json:
        print(f"openmemd: keyword search only: {meta['degraded']}", file=sys.stderr)
    if meta.get("indexing") and not args.json:
        # A one-shot command does not stay to embed (a caller waits for it to exit):
        # what it embedded is kept, the rest is left to whoever runs next.
        print("openmemd: the rest is embedded by `openmemd index`, the daemon (`openmemd "
              "run`) or the next search", file=sys.stderr)
    if args.json:
        _print_json({"results": results, **meta})
        return EXIT_OK
    if meta.get("dates"):
        d = meta["dates"]
        span = d["from"] if d["from"] == d["to"] else f"{d['from']} to {d['to']}"
        print(f"Dates: {span} (\"{d['text']}\")\n")
    if not results:
        from openmemd.cli.report import nothing_note

        print(nothing_note(settings.query.min_score if args.min_score is None
                           else args.min_score, meta.get("nearest")))
        return EXIT_OK
    if (results[0].get("explain") or {}).get("relaxed"):
        from openmemd.cli.report import relaxed_note

        print(relaxed_note(settings.query.min_score if args.min_score is None
                           else args.min_score) + "\n")
    own = settings.store.namespace_for(args.agent)  # hits from others are marked
    for r in results:
        print("\n".join(hit_lines(r, own, explain=args.explain)) + "\n")
    return EXIT_OK


def cmd_index(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.progress import ProgressBar

    bar = ProgressBar(sys.stderr.isatty() and not args.json)
    handler = handler_for(settings, args, progress=bar)
    try:
        reply = handler(SyncRequest(agent=args.agent, force=args.force, wait=True))
    finally:
        handler.close()
    report = reply.get("report", reply)
    if args.json:
        _print_json(report)
        return EXIT_OK
    print(f"Memory index updated ({args.agent}): {report['scanned']} files scanned, "
          f"{report['indexed']} indexed, {report['unchanged']} unchanged, "
          f"{report['deleted']} deleted, {report['chunks']} chunks written"
          + (f", {report['vectorsEmbedded']} embedded" if report.get("vectorsEmbedded") else "")
          + (" (full rebuild)" if report.get("reindexed") else "") + ".")
    if report.get("vectorsPending"):  # a daemon embeds them now; in process, warnings say why
        print(f"  {report['vectorsPending']} chunks still waiting for a vector: keyword search "
              "has them already; `openmemd status` shows the progress.")
    for issue in report.get("skipped", []):
        print(f"  skipped {issue['path']}: {issue['reason']}", file=sys.stderr)
    for issue in report.get("warnings", []):
        print(f"  warning {issue['path']}: {issue['reason']}", file=sys.stderr)
    return EXIT_OK


def cmd_get(settings: Settings, args: argparse.Namespace) -> int:
    reply = ask(settings, args, GetRequest(path=args.path, agent=args.agent,
                                            from_line=args.from_line, lines=args.lines,
                                            namespace=args.namespace))
    if args.json:
        _print_json(reply)
    else:
        sys.stdout.write(reply["text"])
        if reply["text"] and not reply["text"].endswith("\n"):
            sys.stdout.write("\n")
    return EXIT_OK


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

        found = explain_dream(_workspace(settings, args), args.selector, settings.dreaming)
        if args.json:
            _print_json([c.to_dict() for c in found])
        else:
            print("\n\n".join(c.format_text() for c in found) if found
                  else "No recall entry matches that key, path or text.")
        return EXIT_OK
    reply = ask(settings, args, DreamRequest(agent=args.agent, phase=args.phase,
                                              dry_run=args.dry_run))
    result = reply.get("result", reply)
    if args.json:
        _print_json(result)
    else:
        _print_dream_text(result)
    return EXIT_OK


def _workspace(settings: Settings, args: argparse.Namespace) -> Path:
    if args.workspace:
        return Path(args.workspace).expanduser()
    return settings.workspace_for(args.agent)


def _print_dream_text(result: dict[str, Any]) -> None:
    light, rem, deep = result.get("light", {}), result.get("rem", {}), result.get("deep", {})
    dry = bool(result.get("dryRun"))
    print(f"Dreaming {result.get('day')} ({result.get('timezone')})"
          + (" — dry run, nothing written" if dry else ""))
    if light.get("ran"):
        print(f"  light: {light.get('ingestedFiles', 0)} notes ingested, "
              f"{light.get('staged', 0)} candidates staged")
    if rem.get("ran"):
        themes = ", ".join(t["tag"] for t in rem.get("themes", [])[:5]) or "none"
        print(f"  rem: {rem.get('entries', 0)} recent entries, themes: {themes}; "
              f"{rem.get('truths', 0)} possible lasting truths")
    if deep.get("ran"):
        promoted = (f"would promote {deep.get('promoted', 0)}" if dry
                    else f"{deep.get('promoted', 0)} promoted")
        print(f"  deep: {deep.get('eligible', 0)} eligible, {promoted} into MEMORY.md"
              + (" (size cap reached)" if deep.get("sizeCapped") else ""))
    for p in result.get("promoted", []):
        print(f"    + {p.get('key')} score={p.get('score')}")
    for s in deep.get("skipped", []):
        print(f"    - skipped {s.get('key')}: {s.get('reason')}")
    for path in result.get("reportPaths", []):
        print(f"  report: {path}")
    for message in result.get("messages", []):
        print(f"  note: {message}")


def cmd_context(settings: Settings, args: argparse.Namespace) -> int:
    reply = ask(settings, args, ContextRequest(
        agent=args.agent, today=params.today(args.today) if args.today else None))
    if args.json:
        _print_json(reply)
    elif reply["text"]:
        sys.stdout.write(reply["text"])
    else:
        print(f"openmemd: no memory files to load: no USER.md or MEMORY.md, no notes of "
              f"{' or '.join(reply['days'])} in {reply['workspace']}", file=sys.stderr)
    for skipped in reply.get("skipped", []):
        print(f"openmemd: skipped {skipped['path']}: {skipped['reason']}", file=sys.stderr)
    return EXIT_OK


def cmd_run(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.server.daemon import run_daemon

    return run_daemon(settings, config_path=args.config)


def cmd_service(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.server import service

    action: Callable[..., Any] = getattr(service, args.action)
    return int(action(dry_run=args.dry_run) or 0) if args.action != "status" else int(
        action() or 0)


COMMANDS: dict[str, Callable[[Settings, argparse.Namespace], int]] = {
    "run": cmd_run, "status": cmd_status, "doctor": cmd_doctor, "index": cmd_index,
    "search": cmd_search, "get": cmd_get, "dream": cmd_dream, "service": cmd_service,
    "workspace": cmd_workspace,
    "config": config_cmd.run, "add": mcp_cmd.cmd_add, "mcp": mcp_cmd.cmd_mcp,
    "store": store_cmd.run, "context": cmd_context,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = _settings(args)
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

    configure_logging(settings, log_layer_warning=args.command == "run")  # the daemon logs it
    if args.command not in ("run", "doctor") and settings.loaded is not None \
            and settings.loaded.warning:  # the daemon logs it, doctor reports it as a check
        print(f"openmemd: warning: {settings.loaded.warning}", file=sys.stderr)
    if args.command != "run" and not args.log_level:
        set_level("warning")  # one-shot commands: only what needs the user's attention
    try:
        return COMMANDS[args.command](settings, args)
    except ConfigError as exc:
        print(f"openmemd: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OpenmemdError as exc:
        print(f"openmemd: {exc}", file=sys.stderr)
        return EXIT_USAGE if exc.code == "bad_request" else EXIT_FAIL
    except KeyboardInterrupt:
        print("openmemd: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
