"""`openmemd connect claude-code|codex` and `openmemd disconnect …` (cli/commands.py only wires
them): wire an agent to openmemd in its own settings files (`openmemd.agents.connection`),
merging, backing up first, undoing exactly; `--dry-run` prints the unified diff instead."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from openmemd import paths
from openmemd.agents.connection import (
    apply,
    plan_connect,
    plan_disconnect,
    read_record,
    record_file,
)
from openmemd.agents.wiring import Wiring
from openmemd.cli.mcp_cmd import server_command
from openmemd.config import Settings

EXIT_OK = 0
LABEL = {"claude-code": "Claude Code", "codex": "Codex"}


def wiring(settings: Settings, args: argparse.Namespace) -> Wiring:
    mcp = server_command(args)  # [abs openmemd, "mcp", the common options given]
    config = args.config or os.environ.get("OPENMEMD_CONFIG") or paths.config_file()
    return Wiring(mcp_command=mcp, hook_command=[mcp[0], "context", "--hook", args.target,
                                                 *mcp[2:]],
                  config_file=Path(config).expanduser().absolute(),
                  sources=list(settings.sources), env=dict(os.environ))


def run(settings: Settings, args: argparse.Namespace) -> int:
    connecting = args.command == "connect"
    record_path = record_file(settings.state_path(), args.target)
    wired = wiring(settings, args)
    steps = (plan_connect(args.target, wired) if connecting
             else plan_disconnect(args.target, wired, read_record(record_path)))
    label = LABEL[args.target]
    if not steps:
        print(f"{label}: already connected, nothing to change." if connecting
              else f"{label}: nothing of openmemd's to remove.")
        return EXIT_OK
    if args.dry_run:
        for step in steps:
            sys.stdout.write(step.diff())
        print(f"(dry run: {len(steps)} file(s) would change, nothing written)", file=sys.stderr)
        return EXIT_OK
    apply(args.target, steps, record_path, connecting=connecting, say=print)
    if connecting:
        print(f"{label} connected: its next session has openmemd's memory tools"
              + (" and startup context" if args.target == "claude-code" else "")
              + "; undo with `openmemd disconnect " + args.target + "`.")
    else:
        print(f"{label} disconnected.")
    return EXIT_OK
