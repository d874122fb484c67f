"""`openmemd store copy --from URL|PATH --to URL|PATH`: move an index between backends;
`openmemd store adopt`: make the configured PostgreSQL namespace this workspace's.

cli/commands.py only wires it. A PATH is a SQLite index file; a `postgresql://` URL
(or a libpq key/value string such as 'host=db dbname=memory', as `store.url` takes) is the
PostgreSQL backend, in the namespace given by `--from-namespace` / `--to-namespace`
(or `--namespace` for both), default the configured `store.namespace` of `--agent`. Nothing is
re-embedded and a second run changes nothing (see `api.store_copy`). Locations are printed as
the stores show them, never with a password. `adopt` takes over a namespace that another
workspace filled (a writer for another workspace is refused, see `api.store_adopt`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openmemd.config import Settings
from openmemd.errors import BadRequestError

EXIT_OK = 0


def add_parser(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("store", help="copy an index between backends (SQLite file, PostgreSQL)"
                       ", or adopt a PostgreSQL namespace another workspace filled")
    p.add_argument("action", choices=("copy", "adopt"),
                   help="copy: --from to --to; adopt: make the configured namespace this "
                        "workspace's (after a move, or to take over another one's)")
    p.add_argument("--from", dest="source", metavar="URL|PATH",
                   help="the index to copy: a SQLite index file or a postgresql:// URL "
                        "(or 'host=... dbname=...')")
    p.add_argument("--to", dest="target", metavar="URL|PATH",
                   help="where to copy it: a SQLite index file or a postgresql:// URL "
                        "(or 'host=... dbname=...')")
    p.add_argument("--namespace", metavar="NS", help="PostgreSQL namespace on either side "
                   "(default: the configured store.namespace)")
    p.add_argument("--from-namespace", metavar="NS", help="namespace of the source")
    p.add_argument("--to-namespace", metavar="NS", help="namespace of the target")
    p.add_argument("--batch", type=int, default=2000, metavar="N",
                   help="chunks per transaction (default 2000)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    common(p)


def run(settings: Settings, args: argparse.Namespace) -> int:
    if args.action == "adopt":
        return _adopt(settings, args)
    if not (args.source and args.target):
        raise BadRequestError("store copy needs --from and --to")
    from openmemd.api.store_copy import copy_between

    quiet = args.json or not sys.stderr.isatty()
    report = copy_between(args.source, args.target, settings, args.agent,
                          namespace=args.namespace, from_namespace=args.from_namespace,
                          to_namespace=args.to_namespace, batch_chunks=args.batch,
                          progress=None if quiet else _progress)
    if not quiet:
        print(file=sys.stderr)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
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
    from openmemd.api.store_adopt import adopt_namespace

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
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return EXIT_OK
    print(f"Adopted {report.location}: this workspace ({report.workspace}) fills it from now on")
    print(f"  it was filled from {report.previous}" if report.previous
          else "  no workspace was recorded for it")
    return EXIT_OK


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _progress(what: str, n: int) -> None:
    print(f"\r  {n} {what} copied ", end="", file=sys.stderr, flush=True)
