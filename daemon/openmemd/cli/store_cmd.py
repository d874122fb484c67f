"""`openmemd store copy --from URL|PATH --to URL|PATH`: move an index between backends.

Kept out of cli.py, which only wires it. A PATH is a SQLite index file; a `postgresql://` URL
(or a libpq key/value string such as 'host=db dbname=memory', as `store.url` takes) is the
PostgreSQL backend, in the namespace given by `--from-namespace` / `--to-namespace`
(or `--namespace` for both), default the configured `store.namespace` of `--agent`. Nothing is
re-embedded and a second run changes nothing (see `api.store_copy`). Locations are printed as
the stores show them, never with a password.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from openmemd.config import Settings

EXIT_OK = 0


def add_parser(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("store", help="copy an index between backends (SQLite file, PostgreSQL)")
    p.add_argument("action", choices=("copy",), help="copy (the only action)")
    p.add_argument("--from", dest="source", required=True, metavar="URL|PATH",
                   help="the index to copy: a SQLite index file or a postgresql:// URL "
                        "(or 'host=... dbname=...')")
    p.add_argument("--to", dest="target", required=True, metavar="URL|PATH",
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


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _progress(what: str, n: int) -> None:
    print(f"\r  {n} {what} copied ", end="", file=sys.stderr, flush=True)
