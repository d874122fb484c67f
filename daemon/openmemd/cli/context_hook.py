"""`openmemd context --hook claude-code`: the startup context as Claude Code's SessionStart hook.

It reads the hook's JSON on stdin and prints the hook's JSON on stdout: a line naming the
memory tools, then what `openmemd context` prints (the same `context` request, to the daemon
when one serves this workspace and index, in this process otherwise), fitted within what
Claude Code keeps (`agents/claude_code_hook.py`).

It must never block or break a session: any failure — no workspace, a broken config, input
that is not the hook's, a disk that does not answer within `OPENMEMD_HOOK_TIMEOUT` seconds
(default 5) — prints nothing, exits 0 and writes one line to openmemd's log file
(`paths.log_file`). The work runs in a thread the main thread waits for; only the main thread
writes stdout, once, the whole reply: a timeout never leaves half a reply behind. Light like
`cli/fast.py` on the daemon's path: no logging library, settings records or index code.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import threading
import time
from datetime import datetime
from typing import Any

from openmemd import paths
from openmemd.agents import claude_code_hook as host
from openmemd.config.locate import locate
from openmemd.protocol import params
from openmemd.protocol.handler import Handler
from openmemd.protocol.replies import ContextReply, expect
from openmemd.protocol.requests import ContextRequest

DEFAULT_TIMEOUT = 5.0
TIMEOUT_ENV = "OPENMEMD_HOOK_TIMEOUT"
MAX_LOG_BYTES = 1024 * 1024  # then the log is moved to openmemd.log.1 and started again
_ATTEMPTS = 3  # a block of many emoji counts more in UTF-16 than asked: asked again smaller


class HookFailure(Exception):
    """Why the hook printed nothing (its message goes to the log)."""


def run(args: argparse.Namespace) -> int:
    """Exit 0 always; stdout the hook's JSON or nothing."""
    started = time.monotonic()
    timeout = _timeout()
    seen: dict[str, Any] = {}  # the hook's input, for the log line
    done: list[str] = []
    failed: list[str] = []
    captured = io.StringIO()

    def work() -> None:
        try:
            done.append(_reply(args, seen, started + timeout))
        except BaseException as exc:  # every failure is logged, none raised
            failed.append(_why(exc))

    real_stderr, sys.stderr = sys.stderr, captured  # what the work prints is the log's
    try:
        worker = threading.Thread(target=work, name="openmemd-hook", daemon=True)
        worker.start()
        worker.join(timeout)
    finally:
        sys.stderr = real_stderr
    if worker.is_alive():
        _log(f"no answer within {timeout:g} s (a slow disk or daemon?): printed nothing",
             seen, captured.getvalue())
        os._exit(0)  # the stuck thread cannot be stopped; nothing of it was printed
    if failed or not done:
        _log((failed or ["no reply"])[0], seen, captured.getvalue())
        return 0
    try:
        sys.stdout.write(done[0])
        sys.stdout.flush()
    except (OSError, ValueError) as exc:  # Claude Code closed the pipe: nothing to tell it
        _log(f"stdout: {exc}", seen, "")
    return 0


def _reply(args: argparse.Namespace, seen: dict[str, Any], deadline: float) -> str:
    raw = sys.stdin.buffer.read(host.MAX_INPUT_BYTES + 1)
    hook = host.read_input(raw)
    seen.update(session_id=hook.session_id, source=hook.source)
    budget = host.context_budget()
    if args.max_chars:
        budget = min(budget, args.max_chars)
    today = params.today(args.today) if args.today else None
    handler = _handler(args, deadline)
    try:
        for _ in range(_ATTEMPTS):
            reply = expect(handler(ContextRequest(agent=args.agent, today=today,
                                                  max_chars=budget)), ContextReply)
            context = host.additional_context(reply.text)
            over = host.over_by(context)
            if not over:
                return host.output(context)
            budget -= over
            if budget < params.MIN_CONTEXT_CHARS:
                break
    finally:
        handler.close()
    # a daemon older than this command ignores maxChars: restarting it brings the fit
    raise HookFailure(f"the context does not fit in {host.LIMIT} characters (a daemon "
                      f"older than this openmemd? restart it)")


def _handler(args: argparse.Namespace, deadline: float) -> Handler:
    """The daemon serving this agent's workspace and index (found on the light path, as
    `cli/fast.py` does), else this process."""
    from openmemd.api.route import daemon_for, handler_for

    wait = max(0.1, deadline - time.monotonic())
    given = {"workspace": args.workspace, "state_dir": args.state_dir,
             "server.endpoint": args.endpoint}
    where = locate(args.config, os.environ, given)
    if where is not None:
        client = daemon_for(where, args.agent, args.workspace, timeout=wait)
        if client is not None:
            return client
    from openmemd.cli.parser import load_settings

    return handler_for(load_settings(args), args.agent, args.workspace, timeout=wait)


def _timeout() -> float:
    try:
        value = float(os.environ.get(TIMEOUT_ENV, ""))
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if 0 < value <= 600 else DEFAULT_TIMEOUT


def _why(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, (host.HookInputError, HookFailure)):
        return text
    return f"{type(exc).__name__}: {text}"


def _log(reason: str, seen: dict[str, Any], stderr: str) -> None:
    """One JSON line, as the daemon logs under journald; a log that cannot be written is
    given up on (the hook's promise is to stay silent, not to log)."""
    event: dict[str, Any] = {
        "timestamp": datetime.now().astimezone().isoformat(timespec="seconds"),
        "level": "warning", "logger": "openmemd.hook", "event": "hook_printed_nothing",
        "host": host.HOST, "reason": reason[:1000], **{k: v for k, v in seen.items() if v}}
    if stderr.strip():
        event["stderr"] = stderr.strip()[-1000:]
    try:
        path = paths.log_file()
        paths.private_dir(path.parent)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0),
                     paths.PRIVATE_FILE_MODE)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(event, ensure_ascii=False) + "\n")
    except (OSError, ValueError):
        pass
