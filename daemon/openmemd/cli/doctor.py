"""`openmemd doctor`: every check of a set-up, one line each, with the fix for a problem.

Exit codes as `status`: 0 all good, 1 warnings (it works, less well), 2 failures. A check that
raises is reported as that check's failure, never a traceback. Doctor only reads: it creates
no index, writes nothing into the workspace or the state dir, and downloads nothing.

The checks of the engine (sqlite-vec, the model, PostgreSQL) are in api/admin/engine_checks.py,
the layer that may use the store and the model; those of the surroundings are here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import sys
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

from openmemd import __version__, paths
from openmemd.api import route
from openmemd.api.admin import engine_checks as engine
from openmemd.api.admin.engine_checks import FAIL, LEVELS, OK, WARN, Check
from openmemd.config import Settings
from openmemd.config import openclaw as oc_config
from openmemd.config.layers import sessions_dir
from openmemd.config.locate import openclaw_state_dir
from openmemd.errors import ConfigError, OpenmemdError
from openmemd.protocol.replies import PingReply, Reply, expect
from openmemd.protocol.requests import PingRequest, Request, StatusRequest
from openmemd.protocol.status import DaemonStatus

EXIT_OK, EXIT_DEGRADED, EXIT_FAILING = 0, 1, 2
STATUS_TIMEOUT_S = 10.0
# Disk: below 1 GiB or 5 % free, one full rebuild (it writes a second copy of the index
# before swapping it in) or a burst of notes and transcripts can fill the disk before anyone
# notices; below 100 MiB writes are failing or about to.
LOW_FREE_BYTES, LOW_FREE_SHARE, FULL_FREE_BYTES = 1 << 30, 0.05, 100 << 20
MAX_USER_WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")
MARKS = {OK: "✓", WARN: "!", FAIL: "✗"}


class Context:
    """What the checks look at: this agent's settings and workspace, and the daemon lookup
    (asked once, shared by the daemon checks)."""

    def __init__(self, settings: Settings, args: argparse.Namespace) -> None:
        self.base = settings
        self.agent: str = args.agent
        self.settings = settings.for_agent(self.agent)
        self.workspace_arg: str | None = args.workspace
        self.workspace = (Path(args.workspace).expanduser() if args.workspace
                          else settings.workspace_for(self.agent))  # unknown agent: ConfigError

    @cached_property
    def lookup(self) -> route.Lookup:
        return route.daemons_serving(self.base, [self.agent], self.workspace_arg, self.agent)

    @cached_property
    def pong(self) -> PingReply:
        """The serving daemon's ping (its pid and version)."""
        return expect(self._ask(PingRequest()), PingReply)

    def status(self) -> DaemonStatus:
        return expect(self._ask(StatusRequest(agent=self.agent)), DaemonStatus)

    def _ask(self, request: Request) -> Reply:
        from openmemd.client import Client

        assert self.lookup.endpoint is not None
        with Client(self.lookup.endpoint, timeout=STATUS_TIMEOUT_S) as client:
            return client(request)


# -- the checks of the surroundings ---------------------------------------------------------------
def openclaw_json(ctx: Context) -> Check:
    loaded = ctx.settings.loaded
    layer = loaded.openclaw if loaded is not None else None
    if layer is None:
        root = openclaw_state_dir(os.environ)
        path = root / oc_config.CONFIG_NAME if root is not None else None
        if path is not None and path.is_file():  # there, but not read
            return Check("openclaw.json", OK, f"{path} not read (OPENMEMD_OPENCLAW is off)")
        return Check("openclaw.json", OK, f"none{f' at {path}' if path else ''}: openmemd's "
                     "own settings only")
    if layer.warning:
        return Check("openclaw.json", WARN, layer.warning,
                     f"correct {layer.path}: until it reads, its memorySearch settings and "
                     "agents are not used")
    ignored = ", ".join(layer.ignored)
    return Check("openclaw.json", OK, f"{layer.path} read ({len(layer.agents)} agent(s))"
                 + (f"; fields openmemd has no equivalent for, ignored: {ignored}"
                    if ignored else ""))


def workspace(ctx: Context) -> Check:
    ws = ctx.workspace
    if not ws.is_dir():
        return Check("workspace", FAIL, f"{ws} does not exist or is not a directory",
                     "create it, or pass --workspace (`openmemd workspace` creates the default)")
    if not os.access(ws, os.R_OK | os.X_OK):
        return Check("workspace", FAIL, f"{ws} cannot be read", f"chmod u+rx {ws}")
    if not os.access(ws, os.W_OK):
        return Check("workspace", WARN, f"{ws} is read-only: dreaming and `add` cannot write",
                     f"chmod u+w {ws}")
    return Check("workspace", OK, f"{ws} (agent {ctx.agent})")


def symlinks(ctx: Context) -> Check | None:
    """Symlinked notes and folders in the memory paths: never followed, so the notes behind
    them are not found; named here, each with where it leads."""
    from openmemd.api.status import links_not_followed

    if not ctx.workspace.is_dir():
        return None  # the workspace check says so
    links = links_not_followed(ctx.workspace, tuple(ctx.settings.extra_paths))
    if not links:
        return None  # nothing to say: a line only where there is one
    shown = "; ".join(f"{i.path}: {i.reason}" for i in links[:5])
    more = f"; and {len(links) - 5} more (openmemd index lists them)" if len(links) > 5 else ""
    return Check("symlinks", WARN, f"{len(links)} not indexed: {shown}{more}",
                 "move the notes themselves into the workspace")


def _loose(path: Path) -> int | None:
    """The mode of `path` when it grants more than its owner (links: never)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    mode = stat.S_IMODE(st.st_mode)
    return mode if mode & 0o077 and not stat.S_ISLNK(st.st_mode) else None


def state_permissions(ctx: Context) -> Check:
    """The rules of paths.private_state: directories 0700, files 0600. Only openmemd's own
    entries are looked at: a state_dir the user chose may hold other things."""
    root = ctx.settings.state_path()
    if root.exists() and not root.is_dir():  # every command would fail on it
        return Check("state dir", FAIL, f"{root} is not a directory: the index cannot be kept "
                     "there", f"move it aside (mv {root} {root}.bak), or set state_dir to a "
                     "directory")
    if not root.is_dir():
        return Check("state dir", OK, f"{root} not created yet (the first index creates it "
                     "0700)")
    memory = root / "memory"
    try:
        inside = sorted(memory.iterdir()) if memory.is_dir() else []
    except OSError:
        inside = []
    loose = [(p, mode) for p in (root, paths.endpoint_record(root), memory, *inside)
             if (mode := _loose(p)) is not None]
    if not loose:
        return Check("state dir", OK, f"{root}: private (directories 0700, files 0600)")
    shown = ", ".join(f"{p} {mode:04o}" for p, mode in loose[:3])
    more = f" and {len(loose) - 3} more" if len(loose) > 3 else ""
    found = {p for p, _ in loose}
    fixes = [f"chmod 700 {root}" if root in found else "",
             f"chmod 600 {paths.endpoint_record(root)}"
             if paths.endpoint_record(root) in found else "",
             f"chmod -R go-rwx {memory}" if found - {root, paths.endpoint_record(root)} else ""]
    return Check("state dir", WARN,
                 f"other local users can read or list it: {shown}{more} (it holds every chunk "
                 "of the memory)", " && ".join(f for f in fixes if f))


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _index_bytes(ctx: Context) -> int:
    memory = ctx.settings.state_path() / "memory"
    try:
        return sum(p.stat().st_size for p in memory.iterdir() if p.is_file())
    except OSError:
        return 0


def _disk(label: str, path: Path, needed: int, why: str) -> Check:
    usage = shutil.disk_usage(path)
    share = usage.free / usage.total if usage.total else 1.0
    facts = f"{_size(usage.free)} free of {_size(usage.total)} ({share:.0%}) for {label}"
    if usage.free < max(FULL_FREE_BYTES, needed):
        return Check("disk", FAIL, f"{facts}: writes fail or are about to (too little room "
                     f"for {why})", "free space on that disk")
    if usage.free < LOW_FREE_BYTES or share < LOW_FREE_SHARE:
        return Check("disk", WARN, f"{facts}: under 1 GiB or 5 % free is too little room for "
                     f"{why}", "free space on that disk")
    return Check("disk", OK, facts)


def disk_state(ctx: Context) -> Check:
    state = _existing(ctx.settings.state_path())
    index = _index_bytes(ctx)
    same = _existing(ctx.workspace).stat().st_dev == state.stat().st_dev
    return _disk("the state dir" + (" and the workspace" if same else ""), state, index,
                 f"a full rebuild (it writes a second copy of the index, {_size(index)} now)")


def disk_workspace(ctx: Context) -> Check | None:
    path = _existing(ctx.workspace)
    if path.stat().st_dev == _existing(ctx.settings.state_path()).stat().st_dev:
        return None  # one line above covers both
    return _disk("the workspace", path, 0, "a burst of notes, transcripts and dreaming's "
                 "reports")


def _directories(roots: list[Path], cap: int) -> int:
    """Directories inotify watches under `roots` (one watch each, links not followed), counted
    up to `cap`."""
    count = 0
    for root in roots:
        for _ in os.walk(root):
            count += 1
            if count >= cap:
                return count
    return count


def watch_limits(ctx: Context) -> Check:
    sync = ctx.settings.sync
    if not sync.watch:
        return Check("watch limits", OK, "watching is off (sync.watch = false)")
    if sync.watch_polling:
        return Check("watch limits", OK, "polling is configured (sync.watch_polling): no "
                     "inotify watches needed")
    try:
        limit = int(MAX_USER_WATCHES.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return Check("watch limits", OK, "no inotify here: this platform's watcher has no "
                     "per-directory limit")
    roots = [ctx.workspace]
    if "sessions" in ctx.settings.sources:
        transcripts = sessions_dir(ctx.settings, ctx.agent, ctx.workspace)
        if transcripts.is_dir() and not transcripts.resolve().is_relative_to(
                ctx.workspace.resolve()):
            roots.append(transcripts)
    count = _directories(roots, limit + 1)
    facts = f"{count}{'+' if count > limit else ''} directories to watch, " \
            f"fs.inotify.max_user_watches = {limit}"
    fix = (f"sudo sysctl fs.inotify.max_user_watches={max(524288, count * 4)} (and the "
           "same line in /etc/sysctl.d/ to keep it)")
    if count > limit:
        return Check("watch limits", WARN, f"{facts}: the directories past the limit are "
                     "polled, which is slower and costs CPU", fix)
    if count > limit // 2:
        return Check("watch limits", WARN, f"{facts}: over half of a limit every program of "
                     "this user shares (editors, sync tools)", fix)
    return Check("watch limits", OK, facts)


def _restart_fix() -> str:
    if sys.platform == "darwin":
        return "restart the daemon: launchctl kickstart -k gui/$UID/io.github.openmemd"
    return "restart the daemon: systemctl --user restart openmemd (or stop it and openmemd run)"


def daemon(ctx: Context) -> Check:
    lookup = ctx.lookup
    if lookup.endpoint is not None:
        try:
            pong = ctx.pong
        except OpenmemdError as exc:  # it stopped since it answered discovery's ping
            return Check("daemon", WARN, f"the daemon at {lookup.endpoint} stopped answering: "
                         f"{exc}", "openmemd status; restart the daemon")
        return Check("daemon", OK, f"pid {pong.pid} at {lookup.endpoint} (openmemd "
                     f"{pong.version}) serves this workspace and index")
    if lookup.others:
        return Check("daemon", WARN, lookup.reason(),
                     "start a daemon for this workspace (openmemd run --workspace ...), or "
                     "pass the --config, --workspace and --state-dir that one uses")
    return Check("daemon", WARN, "no daemon is running: commands work in process, but "
                 "nothing watches the workspace or runs dreaming",
                 "openmemd service install (or openmemd run)")


def daemon_version(ctx: Context) -> Check | None:
    if ctx.lookup.endpoint is None:
        return None
    try:
        running = ctx.pong.version
    except OpenmemdError:
        return None  # the daemon line says it stopped answering
    if running == __version__:
        return None  # the daemon line shows it
    return Check("daemon version", WARN, f"the daemon runs openmemd {running}, this command "
                 f"is {__version__}: it was upgraded under the running daemon", _restart_fix())


def daemon_health(ctx: Context) -> Check | None:
    if ctx.lookup.endpoint is None:
        return None
    try:
        reply = ctx.status()
    except OpenmemdError as exc:
        return Check("daemon health", WARN, f"the daemon did not answer status: {exc}",
                     "openmemd status; restart the daemon if it hangs")
    if reply.problems:
        return Check("daemon health", WARN, "; ".join(reply.problems),
                     "openmemd status shows the details")
    return Check("daemon health", OK, reply.health or "healthy")


CHECKS: tuple[tuple[str, Callable[[Context], Check | list[Check] | None]], ...] = (
    ("openclaw.json", openclaw_json),
    ("workspace", workspace),
    ("symlinks", symlinks),
    ("state dir", state_permissions),
    ("disk", disk_state),
    ("disk", disk_workspace),
    ("store", lambda ctx: engine.backend(ctx.settings)),
    ("index", lambda ctx: engine.index(ctx.settings, ctx.agent)),
    ("embedding", lambda ctx: engine.embedding(ctx.settings)),
    ("watch limits", watch_limits),
    ("daemon", daemon),
    ("daemon version", daemon_version),
    ("daemon health", daemon_health),
    ("agents", lambda ctx: engine.agents(ctx.settings, ctx.agent)),
)


def run_checks(ctx: Context) -> list[Check]:
    found = []
    for name, check in CHECKS:
        try:
            result = check(ctx)
        except Exception as exc:  # a broken check is one failed line, the others still run
            result = Check(name, FAIL, f"the check itself failed: {type(exc).__name__}: {exc}",
                           "report this as an openmemd bug, with this line")
        if isinstance(result, list):  # one line per item (the connected agents)
            found.extend(result)
        elif result is not None:
            found.append(result)
    return found


# -- output ---------------------------------------------------------------------------------------
def _marks() -> tuple[dict[str, str], str]:
    """✓ ! ✗ and an em dash where the terminal can show them, else plain words."""
    try:
        "✓✗—".encode(sys.stdout.encoding or "ascii")
        return MARKS, " — fix: "
    except (UnicodeEncodeError, LookupError):
        return {level: level for level in LEVELS}, " - fix: "


def worst(checks: list[Check]) -> str:
    return max((c.level for c in checks), key=LEVELS.index, default=OK)


def cmd_doctor(settings: Settings, args: argparse.Namespace) -> int:
    ctx = Context(settings, args)
    return _report(run_checks(ctx), args, str(ctx.workspace))


def broken_config(args: argparse.Namespace, exc: ConfigError) -> int:
    """The settings do not load, so no other check can run: that is the one finding."""
    check = Check("config", FAIL, str(exc), "correct the setting where the message says")
    return _report([check], args, args.workspace or "")


def _report(checks: list[Check], args: argparse.Namespace, workspace: str) -> int:
    level = worst(checks)
    code = {OK: EXIT_OK, WARN: EXIT_DEGRADED, FAIL: EXIT_FAILING}[level]
    if args.json:
        print(json.dumps({"version": __version__, "agent": args.agent, "workspace": workspace,
                          "result": level, "exitCode": code,
                          "checks": [c.to_dict() for c in checks]}, ensure_ascii=False,
                         indent=2))
        return code
    marks, fix_sep = _marks()
    for c in checks:
        print(f"{marks[c.level]} {c.name}: {c.message}" + (fix_sep + c.fix if c.fix else ""))
    warned = sum(c.level == WARN for c in checks)
    failed = sum(c.level == FAIL for c in checks)
    print(f"\n{len(checks)} check{'s' if len(checks) != 1 else ''}: "
          + (f"{failed} failed, {warned} warned" if failed or warned else "all good"))
    return code
