"""The `openmemd add` and `openmemd mcp` commands (cli/commands.py only wires them).

`openmemd mcp` needs the optional MCP SDK (the `mcp` extra: `pip install 'mcp>=2.3,<3'` in
openmemd's environment); without it the command says so in one line and exits 2.
`--print-config HOST` prints the snippet that registers this server with an agent host, with
the absolute path of this `openmemd`.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys

from openmemd.cli.output import print_json
from openmemd.config import DEFAULT_AGENT, Settings

EXIT_OK, EXIT_USAGE = 0, 2
NEEDS_SDK = ("openmemd mcp needs the MCP SDK, in openmemd's own environment: "
             "pip install 'mcp>=2.3,<3'")


def cmd_add(settings: Settings, args: argparse.Namespace) -> int:
    from openmemd.cli.ask import ask
    from openmemd.protocol.replies import AddReply
    from openmemd.protocol.requests import AddRequest

    note = ask(settings, args, AddRequest(text=" ".join(args.text), agent=args.agent,
                                          target="long-term" if args.long_term else "daily"),
               AddReply)
    if args.json:
        print_json(note.to_json())
    else:
        print(f"Added {note.citation}")
    if note.index_error:  # saved all the same: running the command again adds it twice
        print(f"openmemd: saved, not indexed yet: {note.index_error}", file=sys.stderr)
    return EXIT_OK


def cmd_mcp(settings: Settings, args: argparse.Namespace) -> int:
    if args.print_config:
        snippet, where = host_config(args.print_config, server_command(args))
        print(where, file=sys.stderr)  # stdout stays pasteable (or redirectable) as is
        print(snippet)
        return EXIT_OK
    from openmemd.mcp import pipe as mcp_pipe

    code = mcp_pipe.serve(settings, args)  # a daemon hosts the session: no SDK import here
    if code is not None:
        return code
    if not sdk_installed():  # without the extra its dependencies are missing too
        print(NEEDS_SDK, file=sys.stderr)
        return EXIT_USAGE
    try:
        from openmemd.mcp import server as mcp_server
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in ("mcp", "mcp_types"):
            print(NEEDS_SDK, file=sys.stderr)
        else:
            print(f"openmemd mcp: the MCP SDK failed to import ({exc}); reinstall it: "
                  "pip install --force-reinstall 'mcp>=2.3,<3'", file=sys.stderr)
        return EXIT_USAGE
    return mcp_server.serve(settings, args)


def sdk_installed() -> bool:
    """Whether the `mcp` package is there at all (found, not imported: that costs seconds)."""
    import importlib.util

    try:
        return importlib.util.find_spec("mcp") is not None
    except (ImportError, ValueError):  # ValueError: blocked in sys.modules
        return False


# -- registration snippets ------------------------------------------------------------------------
def openmemd_path() -> str:
    """The absolute path of the `openmemd` a host should start: this one."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "openmemd" and os.path.exists(argv0):
        return os.path.abspath(argv0)  # a pipx-style symlink stays valid across upgrades
    beside = os.path.join(os.path.dirname(sys.executable), "openmemd")
    if os.access(beside, os.X_OK):
        return beside  # `python -m openmemd` from a virtualenv: its own script
    return shutil.which("openmemd") or beside


def server_command(args: argparse.Namespace) -> list[str]:
    cmd = [openmemd_path(), "mcp"]
    if getattr(args, "agent", DEFAULT_AGENT) != DEFAULT_AGENT:
        cmd += ["--agent", args.agent]
    for flag, value in (("--workspace", args.workspace), ("--config", args.config),
                        ("--state-dir", args.state_dir), ("--endpoint", args.endpoint)):
        if value:
            cmd += [flag, os.path.abspath(os.path.expanduser(value))
                    if flag != "--endpoint" else value]
    return cmd


def host_config(host: str, cmd: list[str]) -> tuple[str, str]:
    """(the snippet, where it goes) for one host."""
    entry = {"command": cmd[0], "args": cmd[1:]}
    if host == "claude-code":
        return f"claude mcp add openmemd -- {shlex.join(cmd)}", "Run this once:"
    if host == "codex":
        args = ", ".join(json.dumps(a) for a in cmd[1:])
        return (f"[mcp_servers.openmemd]\ncommand = {json.dumps(cmd[0])}\nargs = [{args}]",
                "Add to ~/.codex/config.toml:")
    if host == "openclaw":
        return (json.dumps({"mcp": {"servers": {"openmemd": entry}}}, indent=2),
                "Merge into ~/.openclaw/openclaw.json:")
    where = {"claude-desktop": "Merge into claude_desktop_config.json (Settings > Developer > "
                               "Edit Config):",
             "cursor": "Merge into ~/.cursor/mcp.json (or .cursor/mcp.json in a project):"}[host]
    return json.dumps({"mcpServers": {"openmemd": entry}}, indent=2), where
