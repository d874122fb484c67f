"""A command's request, answered by the daemon that serves its agent's workspace and state dir,
else in this process (`openmemd.api.route` decides)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TypeVar

from openmemd.config import Settings
from openmemd.protocol.records import JsonRecord
from openmemd.protocol.replies import expect
from openmemd.protocol.requests import Request

if TYPE_CHECKING:
    from openmemd.progress import Progress
    from openmemd.protocol.handler import Handler


R = TypeVar("R", bound=JsonRecord)


def handler_for(settings: Settings, args: argparse.Namespace, *,
                progress: Progress | None = None) -> Handler:
    from openmemd.api.route import handler_for as route

    return route(settings, args.agent, args.workspace, progress=progress,
                 notice=lambda why: print(f"openmemd: {why}", file=sys.stderr))


def ask(settings: Settings, args: argparse.Namespace, request: Request, kind: type[R], *,
        progress: Progress | None = None) -> R:
    """The reply to `request`, the record `kind` it answers with."""
    handler = handler_for(settings, args, progress=progress)
    try:
        return expect(handler(request), kind)
    finally:
        handler.close()
