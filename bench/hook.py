"""Claude Code's SessionStart hook, `openmemd context --hook claude-code`: what it costs through
a running daemon and in process (no daemon), next to a bare `python -c pass` and a plain
`openmemd context`.

    python bench/hook.py                 # 20 runs of each
    python bench/hook.py --runs 50 --memory-kb 60

The venv's `openmemd` console script is run as Claude Code runs the hook: the hook's JSON on
stdin, no flags but the hook's, the defaults found in the platform directories (XDG_* and HOME
pointed into a temp dir). The workspace holds a MEMORY.md of --memory-kb KB (over Claude
Code's 10,000-character cap: fitted every run) and notes of today and yesterday. Runs
alternate (pass, `openmemd context`, the hook, pass, ...) so all see the same load; then the
daemon is stopped and the in-process runs alternate the same way. Every hook run's output is
checked: Claude Code's JSON, within the cap. Median and 95th percentile, wall and CPU (user +
system) time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from cli import console_script, isolated_env
from daemon import wait_until_answering
from openmemd.agents import claude_code_hook as hook

HOOK_INPUT = json.dumps({"session_id": "bench", "transcript_path": "/tmp/bench.jsonl",
                         "cwd": "/tmp", "hook_event_name": "SessionStart",
                         "source": "startup"}).encode()
GOAL_MS = 150


def run(cmd: list[str], env: dict[str, str], check: bool) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of `cmd`, the hook's JSON on its stdin."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(HOOK_INPUT)
    proc.stdin.close()
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0 or err:
        sys.exit(f"{' '.join(cmd)} failed: {err.decode(errors='replace')}")
    if check:
        text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        if not out or hook.units(text) > hook.LIMIT or "MEMORY.md" not in text:
            sys.exit(f"the hook printed no fitted context: {out[:200]!r}")
    return took, usage.ru_utime + usage.ru_stime


def make_workspace(ws: Path, memory_kb: int) -> None:
    (ws / "memory").mkdir(parents=True)
    lines, size, i = ["# Memory", ""], 0, 0
    while size < memory_kb * 1024:
        line = f"- fact {i}: the release budget meeting moved to Thursday, room {i % 40}."
        lines.append(line)
        size += len(line) + 1
        i += 1
    (ws / "MEMORY.md").write_text("\n".join(lines) + "\n")
    today = date.today()
    for day, text in ((today, "Call the plumber about the leak."),
                      (today - timedelta(days=1), "Paid the rent; booked the dentist.")):
        (ws / "memory" / f"{day}.md").write_text(f"# {day}\n\n- {text}\n")


def series(label: str, commands: dict[str, list[str]], env: dict[str, str],
           runs: int) -> dict[str, tuple[list[float], list[float]]]:
    for cmd in commands.values():  # warm the page cache and .pyc files
        run(cmd, env, check=False)
    got: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in commands}
    for _ in range(runs):
        for name, cmd in commands.items():
            wall, cpu = run(cmd, env, check="--hook" in cmd)
            got[name][0].append(wall)
            got[name][1].append(cpu)
    print(label)
    for name, (walls, cpus) in got.items():
        print(f"  {name:<34} wall median {ms(statistics.median(walls))} p95 {ms(p95(walls))}"
              f" · CPU median {ms(statistics.median(cpus))} p95 {ms(p95(cpus))}")
    return got


def ms(seconds: float) -> str:
    return f"{seconds * 1000:6.1f} ms"


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--memory-kb", type=int, default=30, help="size of MEMORY.md")
    args = ap.parse_args()

    root = Path(tempfile.mkdtemp(dir="/tmp", prefix="omh"))
    env = isolated_env(root)
    make_workspace(root / "data" / "openmemd" / "workspace", args.memory_kb)
    (root / "config" / "openmemd").mkdir(parents=True)
    (root / "config" / "openmemd" / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    endpoint = f"ipc://{root}/run/openmemd/openmemd.sock"
    openmemd = console_script()
    commands = {"python -c pass": [sys.executable, "-c", "pass"],
                "openmemd context": [openmemd, "context"],  # the same request, unfitted
                "openmemd context --hook claude-code": [openmemd, "context", "--hook",
                                                        "claude-code"]}
    proc = subprocess.Popen([openmemd, "run"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_until_answering(endpoint, proc, pause=0.05)
        print(f"MEMORY.md {args.memory_kb} KB (fitted to Claude Code's {hook.LIMIT:,}-character"
              f" cap every run); {args.runs} alternated runs each")
        daemon = series("through the daemon:", commands, env, args.runs)
        proc.terminate()
        proc.wait(30)
        series("in process (daemon stopped):", commands, env, args.runs)
        through = statistics.median(daemon["openmemd context --hook claude-code"][0]) * 1000
        print(f"through the daemon: median {through:.0f} ms (goal < {GOAL_MS} ms)")
        return 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
