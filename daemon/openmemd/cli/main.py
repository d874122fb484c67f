"""`openmemd`'s entry point: parse the command line, let a running daemon answer what it can
on the light path (`cli/fast.py`), else run the command with the full settings
(`cli/commands.py`, imported only then)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from openmemd.cli.parser import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(argv)
    if not (sys.argv[1:] if argv is None else argv):  # a first try: what there is to run
        parser.print_help(sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if args.command == "context" and args.hook:  # fails open: it never prints an error
        from openmemd.cli.context_hook import run as run_hook

        return run_hook(args)
    from openmemd.cli import fast  # here: the hook does without its output code

    code = fast.guarded(lambda: fast.run(args))
    if code is not None:
        return code
    from openmemd.cli.commands import run

    return run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
