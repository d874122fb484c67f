"""The commands a running daemon answers -- search, get, context, status -- at the cost of a
shell command: the keys that locate the index (`config.locate`), a ping, the request, the
text. No settings records, no logging library, no index code: a command the daemon answers
does not need them (tests/cli/test_cli_imports.py pins what is imported).

When no daemon serves the command's index, or when only the full settings can tell which
daemon would (openclaw.json, PostgreSQL, a locating key the loader would refuse), `run` says
so (None) and `cli/commands.py` runs the command as it always has; the requests and the text
are built here for both paths.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TypeVar

from openmemd.cli.hits import show_search
from openmemd.cli.output import print_json
from openmemd.cli.parser import load_settings, overrides
from openmemd.config.locate import locate
from openmemd.errors import ConfigError, OpenmemdError
from openmemd.protocol import params
from openmemd.protocol.replies import ContextReply, GetReply, SearchReply, expect
from openmemd.protocol.requests import ContextRequest, GetRequest, Request, SearchRequest

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
DAEMON_COMMANDS = ("search", "get", "context", "status")
_T = TypeVar("_T")


def guarded(command: Callable[[], _T]) -> _T | int:
    """Run a command; an expected failure is one line on stderr and its exit code."""
    try:
        return command()
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


def search_request(args: argparse.Namespace) -> SearchRequest:
    return SearchRequest(
        query=" ".join(args.query), agent=args.agent, max_results=args.max_results,
        min_score=args.min_score, sources=tuple(args.sources) if args.sources else None,
        explain=args.explain or not args.json,  # text output marks the relaxed fallback
        today=params.today(args.today) if args.today else None,
        project=os.path.abspath(os.path.expanduser(args.project)) if args.project else None)


def get_request(args: argparse.Namespace) -> GetRequest:
    return GetRequest(path=args.path, agent=args.agent, from_line=args.from_line,
                      lines=args.lines, namespace=args.namespace)


def show_get(args: argparse.Namespace, reply: GetReply) -> int:
    if args.json:
        print_json(reply.to_json())
    else:
        sys.stdout.write(reply.text)
        if reply.text and not reply.text.endswith("\n"):
            sys.stdout.write("\n")
    return EXIT_OK


def context_request(args: argparse.Namespace) -> ContextRequest:
    return ContextRequest(agent=args.agent,
                          today=params.today(args.today) if args.today else None,
                          max_chars=getattr(args, "max_chars", None))


def show_context(args: argparse.Namespace, reply: ContextReply) -> int:
    if args.json:
        print_json(reply.to_json())
    elif reply.text:
        sys.stdout.write(reply.text)
    else:
        print(f"openmemd: no memory files to load: no USER.md or MEMORY.md, no notes of "
              f"{' or '.join(reply.days)} in {reply.workspace}", file=sys.stderr)
    for skipped in reply.skipped:
        print(f"openmemd: skipped {skipped.path}: {skipped.reason}", file=sys.stderr)
    return EXIT_OK


_REQUESTS: dict[str, Callable[[argparse.Namespace], Request]] = {
    "search": search_request, "get": get_request, "context": context_request}


def run(args: argparse.Namespace) -> int | None:
    """The exit code of a command a running daemon answered; None when it is not one, or no
    daemon serves its index, or the light reading cannot tell which would."""
    if args.command not in DAEMON_COMMANDS or args.log_level:  # a log level asks for the logs
        return None
    where = locate(args.config, os.environ, {
        k: v for k, v in overrides(args).items() if k != "log.level"})
    if where is None or params.usage_problem(args.command, vars(args), where.endpoint):
        return None  # the full path says what is wrong, as it always has
    from openmemd.api.route import daemon_for

    try:
        if args.command == "status":
            from openmemd.cli.report import daemon_status

            return daemon_status(where, args)
        client = daemon_for(where, args.agent, args.workspace)
    except ConfigError:  # an unknown agent: the full path names it
        return None
    if client is None:
        return None
    with client:
        reply = client(_REQUESTS[args.command](args))
    if isinstance(reply, SearchReply):
        return show_search(args, reply, lambda: load_settings(args))
    return show_get(args, expect(reply, GetReply)) if args.command == "get" \
        else show_context(args, expect(reply, ContextReply))
