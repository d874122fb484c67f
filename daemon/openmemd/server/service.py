"""`openmemd service install|uninstall|status`: a systemd user unit or a launchd user agent.

The unit and plist texts live here, and only here: `install` renders them with the real path of
the installed `openmemd`, and the example files in the repository (systemd/openmemd.service,
launchd/io.github.openmemd.plist) are the same templates rendered with placeholder paths. A test
asserts that they match (regenerate them with `python -m openmemd.server.service`), so the two
can never drift apart.
"""

from __future__ import annotations

import os
import platform
import plistlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from openmemd import paths

UNIT_NAME = "openmemd.service"
LABEL = "io.github.openmemd"

SYSTEMD_TEMPLATE = """\
# openmemd: local memory daemon for AI agents (systemd user unit).
# Installed by `openmemd service install`; see `openmemd service status`.
# Logs: journalctl --user -u openmemd (JSON lines). Reload config: systemctl --user reload openmemd
[Unit]
Description=openmemd - local memory daemon for AI agents

[Service]
Type=notify
NotifyAccess=main
ExecStart={exec_start}
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=5
# Feeds WATCHDOG=1 while its request loop turns; a hung daemon is restarted.
WatchdogSec=30
TimeoutStartSec=60
TimeoutStopSec=20
# Memory is private to the user.
UMask=0077

# Hardening. The daemon reads the workspace and writes its index, its logs and, when dreaming,
# the workspace's Markdown; everything else is read-only. PrivateTmp stays off: without
# XDG_RUNTIME_DIR the ipc socket lives in /tmp/openmemd-<uid>, where clients must find it.
# `service install` adds a workspace or state dir elsewhere (its flags, the config's agents)
# to ReadWritePaths; one added later needs a drop-in (systemctl --user edit openmemd):
#   [Service]
#   ReadWritePaths=/path/to/workspace
NoNewPrivileges=yes
PrivateTmp=no
ProtectSystem=strict
ReadWritePaths=-%S/openmemd -%C/openmemd -%h/.local/share/openmemd -%h/.openclaw -%t{writable}
LockPersonality=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
SystemCallArchitectures=native

[Install]
WantedBy=default.target
"""

LAUNCHD_DOC = """\
<!-- openmemd: local memory daemon for AI agents (launchd user agent).
     Installed by `openmemd service install` into ~/Library/LaunchAgents/;
     logs in ~/Library/Logs/openmemd/. -->
"""


@dataclass(frozen=True)
class RunOptions:
    """What the installed `openmemd run` is told besides the defaults: the `--config`,
    `--workspace` and `--state-dir` given to `service install`, and the directories it writes
    outside the unit's default ReadWritePaths (ProtectSystem=strict makes the rest read-only)."""

    flags: tuple[str, ...] = ()
    writable: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Plan:
    """What install/uninstall writes, removes and runs (printed as is by --dry-run)."""

    writes: tuple[tuple[Path, str], ...] = ()
    removes: tuple[Path, ...] = ()
    mkdirs: tuple[Path, ...] = ()
    commands: tuple[tuple[str, ...], ...] = field(default=())
    notes: tuple[str, ...] = ()
    # what to do instead when no user service manager can be reached (a container, ssh, su)
    fallback: str = ""

    def describe(self) -> str:
        lines: list[str] = []
        for d in self.mkdirs:
            lines.append(f"mkdir -p {shlex.quote(str(d))}")
        for path, text in self.writes:
            lines.append(f"write {path}:")
            lines.extend(f"    {line}" for line in text.splitlines())
        for path in self.removes:
            lines.append(f"remove {path}")
        for cmd in self.commands:
            lines.append("run " + " ".join(shlex.quote(c) for c in cmd))
        lines.extend(self.notes)
        return "\n".join(lines)


# -- rendering ----------------------------------------------------------------------------------

def openmemd_command() -> list[str]:
    """The command that starts this installation of openmemd, as absolute paths."""
    found = shutil.which("openmemd")
    if found:
        return [str(Path(found).resolve())]
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "openmemd" and argv0.exists():
        return [str(argv0.resolve())]
    return [str(Path(sys.executable).resolve()), "-m", "openmemd"]


def render_systemd(command: Sequence[str], options: RunOptions = RunOptions()) -> str:
    run = [*command, "run", "--foreground", *options.flags]
    exec_start = " ".join(_systemd_quote(c) for c in run)
    # "-": a directory removed later leaves it unwritable instead of failing the unit's start
    writable = "".join(" " + _systemd_quote(f"-{p}") for p in options.writable)
    return SYSTEMD_TEMPLATE.format(exec_start=exec_start, writable=writable)


def render_launchd(command: Sequence[str], home: Path,
                   options: RunOptions = RunOptions()) -> str:
    logs = home / "Library" / "Logs" / "openmemd"
    plist = {
        "Label": LABEL,
        "ProgramArguments": [*command, "run", "--foreground", *options.flags],
        "RunAtLoad": True,
        # Restart after a crash, not after a clean `launchctl bootout`/SIGTERM.
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 10,
        "ProcessType": "Background",
        "Umask": 0o077,
        "StandardOutPath": str(logs / "openmemd.log"),
        "StandardErrorPath": str(logs / "openmemd.err.log"),
        "EnvironmentVariables": {"PATH": "/usr/local/bin:/opt/homebrew/bin:/usr/bin:/bin"},
    }
    text = plistlib.dumps(plist, sort_keys=False).decode("utf-8")
    head, _, rest = text.partition("<plist")
    return head + LAUNCHD_DOC + "<plist" + rest


def _systemd_quote(arg: str) -> str:
    if arg and all(c.isalnum() or c in "/._-+:=@%" for c in arg):
        return arg.replace("%", "%%")
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%") + '"'


# Placeholders for the example files in the repository.
EXAMPLE_SYSTEMD_COMMAND = ("/usr/local/bin/openmemd",)
EXAMPLE_LAUNCHD_COMMAND = ("/usr/local/bin/openmemd",)
EXAMPLE_HOME = Path("/Users/you")


def repo_files() -> dict[str, str]:
    """Repository-relative path -> expected content of the example unit files."""
    return {"systemd/openmemd.service": render_systemd(EXAMPLE_SYSTEMD_COMMAND),
            f"launchd/{LABEL}.plist": render_launchd(EXAMPLE_LAUNCHD_COMMAND, EXAMPLE_HOME)}


# -- platform plans -----------------------------------------------------------------------------

def _platform() -> str:
    return "darwin" if sys.platform == "darwin" else "linux" if sys.platform.startswith(
        "linux") else platform.system().lower()


def systemd_unit_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user" / UNIT_NAME


def launchd_plist_path() -> Path:
    return Path.home() / "Library" / "LaunchAgents" / f"{LABEL}.plist"


def run_options(flags: dict[str, str | None], directories: Sequence[Path]) -> RunOptions:
    """The options of `service install --config/--workspace/--state-dir` (`flags`: option ->
    value or None), each value absolute; `directories` (the settings' state dir and agents'
    workspaces) are writable unless the unit's defaults cover them already."""
    given = [(option, str(Path(value).expanduser().absolute()))
             for option, value in flags.items() if value]
    covered = (paths.state_dir(), paths.cache_dir(), Path.home() / ".local/share/openmemd",
               Path.home() / ".openclaw")
    writable = [d.expanduser().absolute() for d in directories]
    return RunOptions(
        flags=tuple(word for pair in given for word in pair),
        writable=tuple(dict.fromkeys(d for d in writable
                                     if not any(d.is_relative_to(c) for c in covered))))


def install_plan(command: Sequence[str] | None = None,
                 options: RunOptions = RunOptions()) -> Plan:
    command = list(command or openmemd_command())
    if _platform() == "darwin":
        plist = launchd_plist_path()
        uid = os.getuid()
        return Plan(
            mkdirs=(plist.parent, Path.home() / "Library" / "Logs" / "openmemd"),
            writes=((plist, render_launchd(command, Path.home(), options)),),
            commands=(("launchctl", "bootout", f"gui/{uid}/{LABEL}"),
                      ("launchctl", "bootstrap", f"gui/{uid}", str(plist))),
            notes=("(a failing bootout only means the agent was not loaded yet)",))
    unit = systemd_unit_path()
    # ProtectSystem=strict only lets it write paths that exist when the unit starts.
    dirs = (unit.parent, paths.state_dir(), paths.cache_dir(), paths.default_workspace(),
            *options.writable)
    return Plan(mkdirs=dirs, writes=((unit, render_systemd(command, options)),),
                commands=(("systemctl", "--user", "daemon-reload"),
                          ("systemctl", "--user", "enable", "--now", UNIT_NAME)),
                fallback=f"{unit} is written but not started: run `openmemd run` in a "
                "terminal instead, or adapt the unit as a system unit (User=<you>, "
                "WantedBy=multi-user.target)")


def uninstall_plan() -> Plan:
    if _platform() == "darwin":
        plist = launchd_plist_path()
        return Plan(removes=(plist,),
                    commands=(("launchctl", "bootout", f"gui/{os.getuid()}/{LABEL}"),))
    unit = systemd_unit_path()
    return Plan(removes=(unit,),
                commands=(("systemctl", "--user", "disable", "--now", UNIT_NAME),
                          ("systemctl", "--user", "daemon-reload")))


def _execute(plan: Plan, *, tolerate_first_failure: bool) -> int:
    for d in plan.mkdirs:
        d.mkdir(parents=True, exist_ok=True)
    for path, text in plan.writes:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        print(f"wrote {path}")
    code = 0
    for i, cmd in enumerate(plan.commands):
        if shutil.which(cmd[0]) is None:
            print(f"openmemd: {cmd[0]} not found; run it yourself: {' '.join(cmd)}",
                  file=sys.stderr)
            return 1
        result = subprocess.run(cmd, check=False, stdout=None, stderr=subprocess.PIPE,
                                text=True, errors="replace")
        said = result.stderr.strip()
        if _no_user_manager(said):
            print(f"openmemd: no systemd user session here ({said.splitlines()[0]})"
                  + (f"; {plan.fallback}" if plan.fallback else ""), file=sys.stderr)
            code = 1
            break  # the next systemctl --user would fail the same way
        if result.returncode != 0 and not (tolerate_first_failure and i == 0):
            print(f"openmemd: `{' '.join(cmd)}` failed (exit {result.returncode})"
                  + (f": {said.splitlines()[-1]}" if said else ""), file=sys.stderr)
            code = 1
        elif said:
            print(said, file=sys.stderr)  # e.g. "Created symlink ..."
    for path in plan.removes:
        try:
            path.unlink()
            print(f"removed {path}")
        except FileNotFoundError:
            pass
    return code


def _no_user_manager(stderr: str) -> bool:
    """systemctl --user's words for "there is no user manager to talk to"."""
    return any(s in stderr for s in ("Failed to connect to bus", "Failed to connect to user "
                                     "scope bus", "$DBUS_SESSION_BUS_ADDRESS and "
                                     "$XDG_RUNTIME_DIR not defined"))


def install(dry_run: bool = False, options: RunOptions = RunOptions()) -> int:
    """Write the unit/plist for this installation and enable + start it."""
    if _platform() not in ("linux", "darwin"):
        print("openmemd: service install supports systemd (Linux) and launchd (macOS) only",
              file=sys.stderr)
        return 1
    plan = install_plan(options=options)
    if dry_run:
        print(plan.describe())
        return 0
    return _execute(plan, tolerate_first_failure=_platform() == "darwin")


def uninstall(dry_run: bool = False) -> int:
    """Stop and disable the service and remove its unit/plist."""
    if _platform() not in ("linux", "darwin"):
        print("openmemd: nothing to uninstall on this platform", file=sys.stderr)
        return 1
    plan = uninstall_plan()
    if dry_run:
        print(plan.describe())
        return 0
    return _execute(plan, tolerate_first_failure=True)


def status() -> int:
    """Print whether the service is installed, enabled and active; 0 when it is running."""
    if _platform() == "darwin":
        plist = launchd_plist_path()
        print(f"plist: {plist} ({'installed' if plist.exists() else 'not installed'})")
        if not plist.exists() or shutil.which("launchctl") is None:
            return 3
        r = subprocess.run(["launchctl", "print", f"gui/{os.getuid()}/{LABEL}"],
                           capture_output=True, text=True, check=False)
        state = next((ln.split("=", 1)[1].strip() for ln in r.stdout.splitlines()
                      if ln.strip().startswith("state =")), "not loaded")
        print(f"launchd: {state}")
        return 0 if state == "running" else 3
    unit = systemd_unit_path()
    print(f"unit: {unit} ({'installed' if unit.exists() else 'not installed'})")
    if not unit.exists():
        return 3
    if shutil.which("systemctl") is None:
        print("systemctl: not found")
        return 3
    results = {}
    for query in ("is-enabled", "is-active"):
        r = subprocess.run(["systemctl", "--user", query, UNIT_NAME], capture_output=True,
                           text=True, check=False)
        results[query] = (r.stdout.strip() or r.stderr.strip() or "unknown").splitlines()[0]
    print(f"enabled: {results['is-enabled']}\nactive: {results['is-active']}")
    return 0 if results["is-active"] == "active" else 3


def write_repo_files(root: Path) -> None:
    for rel, text in repo_files().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover - regenerates the example files in the repo
    write_repo_files(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd())
