#!/usr/bin/env python3
"""How fast the dashboard's pages answer on a workspace of N notes (issue 46: a page in
<= 200 ms on 1,000 notes).

    python bench/dashboard.py [--notes 1000] [--runs 20]

A daemon (keyword-only, `provider = "none"`, so the figure is the dashboard's and the index's,
not the embedding model's) serves a generated workspace; each page is fetched `--runs` times
over loopback with the session cookie, after one warm-up fetch. Prints each page's median and
p95 wall time.
"""

from __future__ import annotations

import argparse
import http.client
import socket
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fault_daemon import Daemon, notes_workspace, scratch

PAGES = ("/", "/search?q=budget+meeting", "/note?path=memory/2026-01-01-0.md&lines=3-3",
         "/memory", "/dreams")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fetch(port: int, path: str, token: str) -> float:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers={"Cookie": f"openmemd_dashboard={token}"})
    response = conn.getresponse()
    body = response.read()
    conn.close()
    if response.status != 200 or b'class="error' in body:
        raise SystemExit(f"{path}: HTTP {response.status}, or an error page")
    return (time.perf_counter() - started) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    port = free_port()
    with scratch() as root:
        ws = notes_workspace(root, args.notes)
        d = Daemon(root, ws, "none", f"[dashboard]\nport = {port}\n")
        d.start()
        try:
            token = (root / "state" / "dashboard.token").read_text().strip()
            print(f"dashboard on {args.notes} notes, {args.runs} fetches a page (ms):")
            for path in PAGES:
                fetch(port, path, token)
                times = sorted(fetch(port, path, token) for _ in range(args.runs))
                p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
                print(f"  {path:48} median {statistics.median(times):7.1f}  p95 {p95:7.1f}")
        finally:
            d.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
