"""`openmemd dashboard`: the running daemon's dashboard link, with the token, printed and
(unless --no-open) opened in the browser. Without a daemon there is no dashboard: one line,
exit 1."""

from __future__ import annotations

import argparse
import sys
import webbrowser

from openmemd.api.route import daemon_for
from openmemd.config import Settings
from openmemd.protocol.replies import DaemonPingReply
from openmemd.protocol.requests import PingRequest

EXIT_NO_DASHBOARD = 1


def run(settings: Settings, args: argparse.Namespace) -> int:
    client = daemon_for(settings, args.agent, args.workspace, timeout=10.0)
    if client is None:
        print("openmemd: no daemon is running for this workspace; start it (`openmemd run`, "
              "or `openmemd service install`), then run `openmemd dashboard` again",
              file=sys.stderr)
        return EXIT_NO_DASHBOARD
    with client:
        reply = client(PingRequest(agent=args.agent))
    link = reply.dashboard if isinstance(reply, DaemonPingReply) else None
    if link is None:
        print("openmemd: the daemon serves no dashboard ([dashboard] port = 0, or its port "
              "was taken: its log says which)", file=sys.stderr)
        return EXIT_NO_DASHBOARD
    try:
        with open(link.token_file, encoding="ascii") as f:
            token = f.read().strip()
    except OSError as exc:
        print(f"openmemd: cannot read the dashboard's token ({exc.strerror}: "
              f"{link.token_file})", file=sys.stderr)
        return EXIT_NO_DASHBOARD
    url = f"{link.url}?token={token}"
    print(url, flush=True)
    if not args.no_open:
        webbrowser.open(url)
    return 0
