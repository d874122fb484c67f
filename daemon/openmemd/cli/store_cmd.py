"""`openmemd store copy --from URL|PATH --to URL|PATH`: move an index between backends;
`openmemd store adopt`: make the configured PostgreSQL namespace this workspace's.

cli/commands.py only wires it. A PATH is a SQLite index file; a `postgresql://` URL
(or a libpq key/value string such as 'host=db dbname=memory', as `store.url` takes) is the
PostgreSQL backend, in the namespace given by `--from-namespace` / `--to-namespace`
(or `--namespace` for both), default the configured `store.namespace` of `--agent`. Nothing is
re-embedded and a second run changes nothing (see `api.admin.store_copy`). Locations are
printed as the stores show them, never with a password. `adopt` takes over a namespace that another
workspace filled (a writer for another workspace is refused, see `api.admin.store_adopt`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from openmemd.cli.output import print_json
from openmemd.config import Settings
from openmemd.errors import BadRequestError

EXIT_OK = 0


def run(settings: Settings, args: argparse.Namespace) -> int:
    if args.action == "adopt":
        return _adopt(settings, args)
    if not (args.source and args.target):
        raise BadRequestError("store copy needs --from and --to")
    from openmemd.api.admin.store_copy import copy_between

    quiet = args.json or not sys.stderr.isatty()
    report = copy_between(args.source, args.target, settings, args.agent,
                          namespace=args.namespace, from_namespace=args.from_namespace,
                          to_namespace=args.to_namespace, batch_chunks=args.batch,
                          progress=None if quiet else _progress)
    if not quiet:
        print(file=sys.stderr)
    if args.json:
        print_json(report.to_dict())
    else:
        print(f"Copied {_n(report.files, 'file')}, {_n(report.chunks, 'chunk')} "
              f"({report.vectors} with vectors) and "
              f"{_n(report.cache_entries, 'cached embedding')}")
        print(f"  from {report.source}")
        print(f"  to   {report.target}")
        if report.removed_files:
            print(f"  removed {_n(report.removed_files, 'file')} the source does not have")
    return EXIT_OK


def _adopt(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.api.admin.store_adopt import adopt_namespace

    given = [o for o, v in (("--from", args.source), ("--to", args.target),
                            ("--namespace", args.namespace),
                            ("--from-namespace", args.from_namespace),
                            ("--to-namespace", args.to_namespace)) if v]
    if given:
        raise BadRequestError(f"store adopt takes the agent's configured store.url and "
                              f"store.namespace, not {', '.join(given)}")
    report = adopt_namespace(settings, args.agent,
                             Path(args.workspace) if args.workspace else None)
    if args.json:
        print_json(report.to_dict())
        return EXIT_OK
    print(f"Adopted {report.location}: this workspace ({report.workspace}) fills it from now on")
    print(f"  it was filled from {report.previous}" if report.previous
          else "  no workspace was recorded for it")
    return EXIT_OK


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _progress(what: str, n: int) -> None:
    print(f"\r  {n} {what} copied ", end="", file=sys.stderr, flush=True)
