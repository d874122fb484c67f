"""The `openmemd` command line's arguments: every command's parser, defined here without
importing the command (a command's module is imported when it runs, `cli/main.py`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from openmemd import __version__
from openmemd.config.locate import DEFAULT_AGENT, PHASE_CHOICES, SOURCES
from openmemd.protocol.params import MAX_NOTE_BYTES

if TYPE_CHECKING:
    from openmemd.config import Settings

AGENTS = ("claude-code", "codex")  # what `openmemd connect` wires
HOSTS = ("claude-code", "claude-desktop", "codex", "cursor", "openclaw")  # openmemd mcp's
HOOKS = ("claude-code",)  # openmemd context --hook's


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


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, its width found as shutil would (COLUMNS, else the terminal, else
    80) without importing shutil: argparse makes one for every option it defines, and
    shutil's import was a tenth of a daemon-answered command's start-up."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_columns() - 2)


def _columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__
    try:
        return (os.get_terminal_size(stdout.fileno()).columns or 80) if stdout else 80
    except (ValueError, OSError):
        return 80


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; given the arguments, only the parser of the command they name
    (every command's when they name none): defining ~140 options costs a daemon-answered
    command about a quarter of its time, and one command's parser parses it the same."""
    parser = argparse.ArgumentParser(
        prog="openmemd", description="Local memory daemon for AI agents: Markdown memory, "
        "hybrid search, nightly dreaming.", formatter_class=_Formatter)
    parser.add_argument("--version", action="version", version=f"openmemd {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    named = _command_named(argv)
    for name, (help_text, define) in COMMANDS.items():
        if named is None or name == named:
            p = sub.add_parser(name, help=help_text, formatter_class=_Formatter)
            define(p)
            _common(p)
    return parser


def _command_named(argv: Sequence[str] | None) -> str | None:
    """The command the arguments name (their first word, as argparse reads it), if known."""
    words = list(sys.argv[1:] if argv is None else argv)
    first = next((w for w in words if not w.startswith("-")), None)
    if first is None or first not in COMMANDS or words.index(first) != 0:
        return None  # options before the command (--version, -h) or none: the whole parser
    return first


def _run(p: argparse.ArgumentParser) -> None:
    p.add_argument("--foreground", action="store_true",
                   help="stay attached to the terminal (the default; kept for service units)")


def _status(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--deep", action="store_true", help="also embed a probe and run a test query")


def _json_only(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _index(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true",
                   help="rebuild the whole index from the Markdown (cached embeddings reused)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _search(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", nargs="+", help="what to look for")
    p.add_argument("--max-results", type=int, metavar="N", help="results to return (default 6)")
    p.add_argument("--min-score", type=float, metavar="X", help="score threshold 0..1 "
                   "(default 0.35)")
    p.add_argument("--source", action="append", choices=SOURCES, dest="sources",
                   help="restrict to a source (repeatable)")
    p.add_argument("--explain", action="store_true", help="show how each score was made")
    p.add_argument("--today", metavar="YYYY-MM-DD", help='the day "yesterday" and "last week" '
                   "count from (default: today)")
    p.add_argument("--project", metavar="PATH", help="only Claude Code / Codex sessions that "
                   "ran in this folder (default: everything)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _get(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="workspace-relative path or a search hit's citation, e.g. "
                   "memory/2026-01-02.md, memory/2026-01-02.md:3-9 or MEMORY.md#L3-L9")
    p.add_argument("--from", dest="from_line", type=int, metavar="N",
                   help="first line (1-based); with --lines, replaces a citation's range")
    p.add_argument("--lines", type=int, metavar="N", help="number of lines")
    p.add_argument("--namespace", metavar="NS", help="read a hit from this other searched "
                   "namespace (PostgreSQL), as the shared index stores it")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _dream(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", choices=("run", "explain"), default="run",
                   help="run a sweep (default) or explain a candidate")
    p.add_argument("selector", nargs="?", help="for explain: a key, a path or a text fragment")
    p.add_argument("--phase", choices=PHASE_CHOICES, default="all")
    p.add_argument("--dry-run", action="store_true", help="compute everything, write nothing")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _memory(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", choices=("list", "demote", "undo"), default="list",
                   help="list MEMORY.md's entries with why each promoted one is there "
                        "(default), demote one to the archive note, or undo a demotion")
    p.add_argument("key", nargs="?", help="for demote and undo: the entry's key")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _context(p: argparse.ArgumentParser) -> None:
    p.add_argument("--today", metavar="YYYY-MM-DD", help="the day a session starts (default: "
                   "today in the dreaming timezone)")
    p.add_argument("--max-chars", type=int, metavar="N", help="fit the whole block within N "
                   "characters (a host that cuts longer input), the daily notes kept first")
    p.add_argument("--hook", choices=HOOKS, help="run as HOST's session-start hook: its JSON "
                   "on stdin, the context in its JSON on stdout; any failure prints nothing "
                   "and exits 0 (the reason goes to openmemd's log)")
    p.add_argument("--json", action="store_true", help="machine-readable output: the files, "
                   "their sizes, what was truncated, the days and the text")


def _service(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("install", "uninstall", "status"))
    p.add_argument("--dry-run", action="store_true", help="print what would be written and run")


def _nothing(p: argparse.ArgumentParser) -> None:
    pass


def _config(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("show",), help="show (the only action)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _add(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="+",
                   help=f"the note (one bullet; at most {MAX_NOTE_BYTES} bytes)")
    p.add_argument("--long-term", action="store_true", help="append to MEMORY.md instead")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _mcp(p: argparse.ArgumentParser) -> None:
    p.add_argument("--print-config", metavar="HOST", choices=HOSTS,
                   help=f"print how to register this server with HOST ({', '.join(HOSTS)})")


def _connect(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="AGENT", choices=AGENTS, help=" or ".join(AGENTS))
    p.add_argument("--dry-run", action="store_true",
                   help="print the change as a unified diff, write nothing")


def _dashboard(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-open", action="store_true",
                   help="print the link only; do not open it in the browser")


def _store(p: argparse.ArgumentParser) -> None:
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


# command -> (its line in `openmemd --help`, what defines its own arguments), in help order
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "run": ("run the daemon (what the service units start)", _run),
    "status": ("health of the daemon and the index", _status),
    "doctor": ("check the set-up, each problem with its fix", _json_only),
    "index": ("sync the index with the workspace now", _index),
    "search": ("search the memory", _search),
    "get": ("print lines of a memory file", _get),
    "dream": ("run dreaming now, or explain a candidate", _dream),
    "memory": ("list MEMORY.md entry by entry with why each promoted one is there; demote "
               "one (undoable)", _memory),
    "context": ("print the session's startup context (MEMORY.md, USER.md, today's and "
                "yesterday's notes) for an agent's prompt", _context),
    "service": ("install the systemd user unit or launchd agent", _service),
    "workspace": ("print the workspace path (creates its memory/)", _nothing),
    "config": ("show the effective settings and where each came from", _config),
    "add": ("append a note to today's memory file (or MEMORY.md)", _add),
    "mcp": ("serve the memory to an agent over MCP (stdio)", _mcp),
    "connect": ("wire an agent (claude-code, codex) to openmemd in its own settings: MCP "
                "server, its sessions as a source, startup context", _connect),
    "disconnect": ("undo `openmemd connect`, exactly", _connect),
    "dashboard": ("print and open the daemon's local web dashboard (status, search, "
                  "notes, memory)", _dashboard),
    "store": ("copy an index between backends (SQLite file, PostgreSQL), or adopt a "
              "PostgreSQL namespace another workspace filled", _store),
}


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the common options set (dotted keys; None: not given)."""
    return {"workspace": args.workspace, "state_dir": args.state_dir,
            "server.endpoint": args.endpoint, "log.level": args.log_level}


def load_settings(args: argparse.Namespace) -> Settings:
    """The full settings of this command line (its options over the config and environment)."""
    from openmemd.config import load_settings as load

    return load(args.config, overrides=overrides(args))
