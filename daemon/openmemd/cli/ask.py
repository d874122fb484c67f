"""A command's request, answered by the daemon that serves its agent's workspace and state dir,
else in this process (`openmemd.api.route` decides)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from openmemd.config import Settings
from openmemd.protocol.requests import Request

if TYPE_CHECKING:
    from openmemd.progress import Progress
    from openmemd.protocol.handler import Handler


def handler_for(settings: Settings, args: argparse.Namespace, *,
                progress: Progress | None = None) -> Handler:
    from openmemd.api.route import handler_for as route

    return route(settings, args.agent, args.workspace, progress=progress,
                 notice=lambda why: print(f"openmemd: {why}", file=sys.stderr))


def ask(settings: Settings, args: argparse.Namespace, request: Request, *,
        progress: Progress | None = None) -> dict[str, Any]:
    handler = handler_for(settings, args, progress=progress)
    try:
        return handler(request)
    finally:
        handler.close()
