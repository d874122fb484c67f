"""MCP figures: `openmemd mcp` start-up and search latency against the socket, daemon running.

(Not named mcp.py: run as a script, that would shadow the MCP SDK itself.)

    python bench/mcp_bench.py                      # default provider (the local model), 200 notes
    python bench/mcp_bench.py --provider none      # keyword index only
    python bench/mcp_bench.py --searches 100

Measures:
  * with a daemon serving the workspace (it hosts the MCP sessions; `openmemd mcp` is a byte
    pipe to them): spawn -> `initialize` answered, and `initialize` -> first `memory_search`
    answered (cold `openmemd mcp` process; goals: initialize ≤ 1 s, first search ≤ 1.5 s),
  * the same without a daemon (the in-process SDK server: the SDK's import, then the index
    opened in process; goal: spawn -> first search answered ≤ 1.5 s), and the first search
    sent 1 s after `initialize`, as a host's model does (the index and the model load in the
    background meanwhile),
  * `import openmemd.mcp.server` alone in a fresh interpreter (what the in-process start is
    made of),
  * p50/p95 of N `memory_search` calls through MCP, against N `search` requests on the socket
    directly with the same queries (goal: MCP p50 ≤ 1.2 × socket p50).
Needs the MCP SDK (`pip install -e '.[mcp]'`).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from daemon import WORDS, make_workspace, pct
from openmemd.client import Client, DaemonNotRunning

PAUSE = 1.0  # s between `initialize` and a host's first tool call, in the paused runs


def queries(n: int) -> list[str]:
    rng = random.Random(11)
    return [" ".join(rng.choices(WORDS, k=2)) for _ in range(n)]


async def mcp_run(params: StdioServerParameters, qs: list[str], errlog: TextIO,
                  endpoint: str | None = None, pause: float = 0.0) -> dict[str, Any]:
    """One MCP server process: time to initialize, to the first search (sent `pause` s after
    `initialize` was answered: a host's model takes that long to decide to call a tool), then
    (with `endpoint`) each query through MCP and on the socket, interleaved so that both see
    the same machine load."""
    started = time.perf_counter()
    async with stdio_client(params, errlog=errlog) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        t_init = time.perf_counter() - started
        await anyio.sleep(pause)
        sent = time.perf_counter()
        first = await session.call_tool("memory_search", {"query": qs[0]})
        t_first = time.perf_counter() - started
        t_call = time.perf_counter() - sent
        assert not first.is_error, first.content
        via_mcp: list[float] = []
        via_socket: list[float] = []
        client = Client(endpoint, timeout=60) if endpoint else None
        try:
            for i, q in enumerate(qs if endpoint else []):
                # Whichever goes first embeds the query (the daemon caches query vectors), so
                # the two take turns at going first.
                for way in (("mcp", "socket") if i % 2 == 0 else ("socket", "mcp")):
                    t0 = time.perf_counter()
                    if way == "mcp":
                        result = await session.call_tool("memory_search", {"query": q})
                        via_mcp.append(time.perf_counter() - t0)
                        assert not result.is_error, result.content
                    else:
                        client.search(q)  # type: ignore[union-attr]
                        via_socket.append(time.perf_counter() - t0)
        finally:
            if client is not None:
                client.close()
        status = await session.call_tool("memory_status", {})
        mode = (status.structured_content or {}).get("mode")
    return {"init": t_init, "first": t_first, "call": t_call, "mcp": via_mcp,
            "socket": via_socket, "mode": mode}


def import_cost(env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of `import openmemd.mcp.server` in a fresh interpreter;
    the CPU figure does not depend on what else the machine is doing."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import openmemd.mcp.server"], env=env, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--provider", default="auto", choices=("auto", "local", "none"))
    ap.add_argument("--notes", type=int, default=200)
    ap.add_argument("--searches", type=int, default=100)
    ap.add_argument("--cold-runs", type=int, default=3, help="MCP server starts to time")
    args = ap.parse_args()
    # Stopped with SIGTERM, still stop the daemon (the `finally` below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    root = Path(tempfile.mkdtemp(dir="/tmp", prefix="ombm"))
    ws = make_workspace(root, args.notes)
    cfg = root / "config.toml"
    cfg.write_text(f'[embedding]\nprovider = "{args.provider}"\n')
    endpoint = f"ipc://{root}/d.sock"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMEMD_")}
    env["OPENMEMD_ENDPOINT"] = endpoint
    common = ["--config", str(cfg), "--workspace", str(ws), "--state-dir", str(root / "state")]
    daemon = subprocess.Popen([sys.executable, "-m", "openmemd", "run", *common], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with Client(endpoint, timeout=1.0) as c:
                    c.ping()
                    c.sync(wait=True)  # fully indexed (and the model warm) before timing
                # ... and hosting MCP sessions (the SDK is imported in the background)
                while not c.ping().get("mcp"):
                    if time.monotonic() > deadline:
                        print("the daemon does not host MCP sessions", file=sys.stderr)
                        return 1
                    time.sleep(0.1)
                break
            except DaemonNotRunning:
                if time.monotonic() > deadline or daemon.poll() is not None:
                    print("the daemon did not start", file=sys.stderr)
                    return 1
                time.sleep(0.1)
        with Client(endpoint, timeout=60) as c:
            # sync answers once keyword rows are written: wait for every vector too. A chunk
            # left without one would make each in-process run below embed it, its first
            # search waiting for that fill (FOREGROUND_FILL_S) instead of measuring a start.
            while c.status()["agents"]["main"].get("pendingVectors"):
                time.sleep(0.05)
        qs = queries(args.searches)
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "openmemd", "mcp", *common],
            env={"OPENMEMD_ENDPOINT": endpoint, "PATH": env.get("PATH", ""),
                 # the checkout under test, when PYTHONPATH names one (before/after runs)
                 **{k: v for k, v in env.items() if k == "PYTHONPATH"}})
        imports = [import_cost(env) for _ in range(3)]
        with open(os.devnull, "w") as errlog:
            cold = [anyio.run(mcp_run, params, qs[:1], errlog) for _ in range(args.cold_runs)]
            warm = anyio.run(mcp_run, params, qs, errlog, endpoint)
            daemon.terminate()
            daemon.wait(30)
            alone = [anyio.run(mcp_run, params, qs[:1], errlog) for _ in range(args.cold_runs)]
            paused = [anyio.run(mcp_run, params, qs[:1], errlog, None, PAUSE)
                      for _ in range(args.cold_runs)]
    finally:
        if daemon.poll() is None:
            daemon.terminate()
            daemon.wait(30)
        shutil.rmtree(root, ignore_errors=True)

    mcp_times, sock_times = warm["mcp"], warm["socket"]
    ratio = statistics.median(mcp_times) / statistics.median(sock_times)
    print(f"workspace: {args.notes} notes, provider {args.provider}; MCP server mode: "
          f"{warm['mode']}")
    print(f"python + import openmemd.mcp.server (fresh interpreter): median "
          f"{statistics.median(w for w, _ in imports):.2f} s wall, "
          f"{statistics.median(c for _, c in imports):.2f} s CPU")
    for label, runs in (("with the daemon (pipe)", cold), ("without a daemon (in process)",
                                                           alone)):
        print(f"{label}: spawn -> initialize answered: "
              + ", ".join(f"{r['init']:.2f}" for r in runs)
              + f" s (median {statistics.median(r['init'] for r in runs):.2f} s; goal ≤ 1 s); "
              "initialize -> first memory_search answered: "
              + ", ".join(f"{r['first'] - r['init']:.2f}" for r in runs)
              + f" s (median {statistics.median(r['first'] - r['init'] for r in runs):.2f} s;"
              " goal ≤ 1.5 s); modes: " + ", ".join(sorted({str(r['mode']) for r in runs})))
    print("without a daemon: spawn -> first memory_search answered (sent at once): "
          + ", ".join(f"{r['first']:.2f}" for r in alone)
          + f" s (median {statistics.median(r['first'] for r in alone):.2f} s; goal ≤ 1.5 s)")
    print(f"without a daemon, the first memory_search sent {PAUSE:.0f} s after initialize (a "
          "host deciding to call): answered in " + ", ".join(f"{r['call']:.2f}" for r in paused)
          + f" s (median {statistics.median(r['call'] for r in paused):.2f} s)")
    print(f"{len(qs)} searches through MCP: p50 {statistics.median(mcp_times) * 1000:.2f} ms, "
          f"p95 {pct(mcp_times, 0.95) * 1000:.2f} ms")
    print(f"{len(qs)} same searches on the socket (interleaved): p50 "
          f"{statistics.median(sock_times) * 1000:.2f} ms, "
          f"p95 {pct(sock_times, 0.95) * 1000:.2f} ms")
    print(f"MCP / socket p50: {ratio:.2f}× (goal ≤ 1.2×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
