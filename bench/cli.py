"""CLI figures: what `openmemd search` and `openmemd status` cost against a running daemon,
next to what a bare `python -c pass` costs on the same machine at the same moment.

    python bench/cli.py                    # 10 runs each, keyword daemon, 40 notes
    python bench/cli.py --runs 20 --provider local

A real daemon serves a small generated workspace; the commands are the venv's `openmemd`
console script with no flags and no OPENMEMD_* variables: a user's set-up with the defaults,
everything found in the platform directories (here XDG_* and HOME pointed into a temp dir):
the config file, the state dir, the endpoint the daemon recorded there. The runs alternate
(pass, search, status, pass, ...) so that all three see the same load; the goal is a median
of ≤ 5× the bare interpreter. CPU time (user + system) is printed too: on a busy machine it
varies less than wall time. Then `python -X importtime` of the search command lists what it
imports, heaviest first.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from daemon import make_workspace, wait_until_answering
from openmemd.client import Client

QUERY = "release budget meeting"
GOAL = 5.0


def console_script() -> str:
    script = Path(sys.executable).parent / "openmemd"
    if not script.exists():
        sys.exit(f"no console script at {script}: run this with the venv's python")
    return str(script)


def isolated_env(root: Path) -> dict[str, str]:
    """A new user's environment: HOME and the XDG folders under `root`, none of this machine's
    openmemd, OpenClaw or XDG variables."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENMEMD_", "OPENCLAW_", "XDG_"))}
    env |= {"HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_STATE_HOME": str(root / "state"), "XDG_DATA_HOME": str(root / "data"),
            "XDG_RUNTIME_DIR": str(root / "run")}
    for name in ("home", "run"):
        (root / name).mkdir(mode=0o700)
    return env


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of `cmd`."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode})")
    return took, usage.ru_utime + usage.ru_stime


def importtime(cmd: list[str], env: dict[str, str], top: int) -> None:
    """`python -X importtime` of `cmd`: the modules with the most self time, and the
    packages (openmemd by module) with the most in total."""
    done = subprocess.run([sys.executable, "-X", "importtime", *cmd], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rows: list[tuple[int, str]] = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = line[len("import time:"):].split("|")
        rows.append((int(self_us), name.strip()))
    by_package: dict[str, int] = defaultdict(int)
    for self_us, name in rows:
        parts = name.split(".")
        by_package[".".join(parts[:2]) if parts[0] == "openmemd" else parts[0]] += self_us
    total = sum(us for us, _ in rows)
    print(f"\nimports of `openmemd search`: {len(rows)} modules, {total / 1000:.0f} ms "
          "(self times summed; -X importtime inflates them)")
    print("  heaviest packages: " + ", ".join(
        f"{name} {us / 1000:.1f}" for name, us in
        sorted(by_package.items(), key=lambda kv: -kv[1])[:top]) + " (ms)")
    print("  heaviest modules:  " + ", ".join(
        f"{name} {us / 1000:.1f}" for us, name in sorted(rows, reverse=True)[:top]) + " (ms)")
    print("  loaded: " + ", ".join(sorted(
        name for name in by_package if name in {"structlog", "asyncio", "numpy", "sqlean",
                                                 "sqlite3", "zmq", "tomllib", "json5",
                                                 "platformdirs"}
        or name.startswith("openmemd."))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--notes", type=int, default=40)
    ap.add_argument("--provider", default="none", choices=("auto", "local", "none"),
                    help="the daemon's embedding provider (the CLI's cost does not depend on "
                    "it; none starts in a second)")
    ap.add_argument("--top", type=int, default=12, help="import-time rows to print")
    args = ap.parse_args()

    root = Path(tempfile.mkdtemp(dir="/tmp", prefix="omc"))
    env = isolated_env(root)
    make_workspace(root / "data" / "openmemd", args.notes).rename(
        root / "data" / "openmemd" / "workspace")
    (root / "config" / "openmemd").mkdir(parents=True)
    (root / "config" / "openmemd" / "config.toml").write_text(
        f'[embedding]\nprovider = "{args.provider}"\n')
    endpoint = f"ipc://{root}/run/openmemd/openmemd.sock"
    openmemd = console_script()
    proc = subprocess.Popen([openmemd, "run"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_until_answering(endpoint, proc, pause=0.05)
        with Client(endpoint, timeout=600) as c:
            c.sync()
            while c.status()["agents"]["main"].get("pendingVectors"):
                time.sleep(0.05)
            hits = len(c.search(QUERY)["results"])
        commands = {"python -c pass": [sys.executable, "-c", "pass"],
                    f"openmemd search {QUERY!r}": [openmemd, "search", *QUERY.split()],
                    "openmemd status": [openmemd, "status"]}
        for cmd in commands.values():  # warm the page cache and .pyc files
            run(cmd, env)
        walls: dict[str, list[float]] = {label: [] for label in commands}
        cpus: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(args.runs):
            for label, cmd in commands.items():
                took, cpu = run(cmd, env)
                walls[label].append(took)
                cpus[label].append(cpu)
        base = statistics.median(walls["python -c pass"])
        base_cpu = statistics.median(cpus["python -c pass"])
        print(f"daemon: provider {args.provider}, {args.notes + 1} notes, search finds {hits}; "
              f"median of {args.runs} alternated runs each")
        for label in commands:
            med, cpu = statistics.median(walls[label]), statistics.median(cpus[label])
            print(f"  {label:<40} wall {med * 1000:6.1f} ms ({med / base:4.1f}×) · CPU "
                  f"{cpu * 1000:6.1f} ms ({cpu / base_cpu:4.1f}×)")
        worst = max(statistics.median(v) for v in walls.values()) / base
        worst_cpu = max(statistics.median(v) for v in cpus.values()) / base_cpu
        print(f"ratio, slowest command / python -c pass: wall {worst:.1f}×, CPU "
              f"{worst_cpu:.1f}× (goal ≤ {GOAL:.0f}×)")
        importtime([openmemd, "search", *QUERY.split()], env, args.top)
        return 0
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
