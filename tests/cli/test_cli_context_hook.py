"""`openmemd context --hook claude-code`: Claude Code's SessionStart hook. Fed the hook's JSON,
it prints Claude Code's JSON with the startup context inside its 10,000-character cap; any
failure prints nothing on stdout or stderr, exits 0 and leaves one line in openmemd's log.
In process here (no daemon listens); through a real daemon in the slow tests."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

import pytest

from daemon_harness import Daemon, make_daemon
from openmemd.agents import claude_code_hook as hook
from openmemd.cli import main

TODAY = date.today()
YESTERDAY = TODAY - timedelta(days=1)
HOOK_INPUT = {"session_id": "8c1a6f7e", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
              "hook_event_name": "SessionStart", "source": "startup"}

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def log_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    return tmp_path / "xdg-state" / "openmemd" / "log" / "openmemd.log"


@pytest.fixture
def run_hook(make_settings, tmp_path: Path, capsys, monkeypatch, log_file: Path) -> Run:
    make_settings()
    endpoint = f"ipc://{tmp_path}/none.sock"  # nothing listens here

    def run(stdin: bytes | None = None, *extra: str) -> tuple[int, str, str]:
        data = json.dumps(HOOK_INPUT).encode() if stdin is None else stdin
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        code = main(["context", "--hook", "claude-code", "--config",
                     str(tmp_path / "config.toml"), "--endpoint", endpoint, *extra])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def context_of(out: str) -> str:
    reply = json.loads(out)
    assert list(reply) == ["hookSpecificOutput"]
    assert reply["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text: str = reply["hookSpecificOutput"]["additionalContext"]
    return text


def logged(log_file: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in log_file.read_text().splitlines()]


def test_fed_the_hooks_json_it_prints_the_startup_context(run_hook: Run, workspace: Path,
                                                           log_file: Path) -> None:
    (workspace / "MEMORY.md").write_text("# Memory\n\n- Ann is allergic to peanuts.\n")
    (workspace / "memory" / f"{TODAY}.md").write_text("- Call the plumber.\n")
    (workspace / "memory" / f"{YESTERDAY}.md").write_text("- Paid the rent.\n")
    code, out, err = run_hook()
    assert code == 0 and err == ""
    text = context_of(out)
    assert text.startswith(hook.TOOLS_LINE + "\n\n[Startup context: the user's memory files")
    assert text.index("allergic to peanuts") < text.index("plumber") < text.index("rent")
    assert "<untrusted-memory-files>" in text and "more characters in" not in text
    assert hook.units(text) <= hook.LIMIT
    assert not log_file.exists()  # a success logs nothing


@pytest.mark.parametrize("line", ["- fact {i}: the project uses Postgres 16.\n",
                                  "- fact {i}: 🦓 Zora the zebra, 🐘 Ella the elephant.\n"])
def test_a_memory_md_over_the_limit_is_fitted_the_days_kept(run_hook: Run, workspace: Path,
                                                            line: str) -> None:
    (workspace / "MEMORY.md").write_text("".join(line.format(i=i) for i in range(600)))
    (workspace / "memory" / f"{TODAY}.md").write_text("- Call the plumber.\n")
    (workspace / "memory" / f"{YESTERDAY}.md").write_text("- Paid the rent.\n")
    code, out, err = run_hook()
    assert code == 0 and err == ""
    text = context_of(out)
    assert hook.units(text) <= hook.LIMIT  # emoji count twice, as Claude Code counts them
    assert hook.units(text) > hook.LIMIT - 1000  # filled, not emptied
    assert text.startswith(hook.TOOLS_LINE)
    assert "- Call the plumber." in text and "- Paid the rent." in text
    assert "- fact 0: " in text and "- fact 599: " not in text
    assert "more characters in MEMORY.md]" in text
    assert text.rstrip().endswith("</untrusted-memory-files>")  # whole, not cut by Claude Code


def test_no_memory_yet_prints_the_tools_line_alone(run_hook: Run) -> None:
    code, out, err = run_hook()
    assert code == 0 and err == "" and context_of(out) == hook.TOOLS_LINE


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[]", b'{"hook_event_name": "Stop"}'])
def test_malformed_stdin_prints_nothing_and_logs_why(run_hook: Run, workspace: Path,
                                                     log_file: Path, stdin: bytes) -> None:
    (workspace / "MEMORY.md").write_text("- fact\n")
    assert run_hook(stdin) == (0, "", "")
    [line] = logged(log_file)
    assert line["event"] == "hook_printed_nothing" and line["host"] == "claude-code"
    assert "stdin" in line["reason"] or "hook_event_name" in line["reason"]


def test_no_workspace_and_no_daemon_prints_nothing(run_hook: Run, workspace: Path,
                                                   log_file: Path) -> None:
    workspace.rename(workspace.with_name("gone"))
    assert run_hook() == (0, "", "")
    [line] = logged(log_file)
    assert "does not exist" in line["reason"] and line["session_id"] == "8c1a6f7e"
    assert line["source"] == "startup"


def test_a_broken_config_prints_nothing(run_hook: Run, workspace: Path, tmp_path: Path,
                                        log_file: Path) -> None:
    (workspace / "MEMORY.md").write_text("- fact\n")
    (tmp_path / "config.toml").write_text("[context\nbootstrap_max_chars = 'many'\n")
    assert run_hook() == (0, "", "")
    [line] = logged(log_file)
    assert "config.toml" in line["reason"]


def test_an_unwritable_log_still_prints_nothing(run_hook: Run, workspace: Path,
                                                log_file: Path) -> None:
    log_file.parent.parent.mkdir(parents=True)
    log_file.parent.write_text("a file where the log directory goes")
    assert run_hook(b"nope") == (0, "", "")


# -- the real command, as Claude Code runs it --------------------------------------------------

def hook_process(d: Daemon, stdin: bytes | None, env: dict[str, str],
                 timeout: float = 60) -> tuple[subprocess.CompletedProcess[bytes], float]:
    started = time.perf_counter()
    done = subprocess.run(d.args("context", "--hook", "claude-code"), env=env,
                          input=json.dumps(HOOK_INPUT).encode() if stdin is None else stdin,
                          capture_output=True, timeout=timeout)
    return done, time.perf_counter() - started


@pytest.fixture
def daemon(tmp_path: Path):
    gen = make_daemon()
    d = next(gen)
    d.env["XDG_STATE_HOME"] = str(tmp_path / "xdg-state")
    (d.workspace / "MEMORY.md").write_text("# Memory\n\n- The zebra is called Zora.\n")
    (d.workspace / "memory" / f"{TODAY}.md").write_text("- Call the plumber.\n")
    yield d
    gen.close()


@pytest.mark.slow
def test_through_a_real_daemon_and_without_it(daemon: Daemon, log_file: Path) -> None:
    daemon.start()
    done, _ = hook_process(daemon, None, daemon.env)
    assert done.returncode == 0 and done.stderr == b""
    text = context_of(done.stdout.decode())
    assert "Zora" in text and "plumber" in text  # (that the daemon answered: test_cli_imports)
    assert daemon.stop() == 0
    done, _ = hook_process(daemon, None, daemon.env)  # in process: the same context
    assert done.returncode == 0 and done.stderr == b"" and context_of(done.stdout.decode()) == text
    assert not log_file.exists()


@pytest.mark.slow
def test_a_hook_that_gets_no_answer_in_time_prints_nothing(daemon: Daemon,
                                                          log_file: Path) -> None:
    # stdin that never ends stands for any read that hangs (a disk, a daemon): the hard
    # timeout ends it, silently
    env = {**daemon.env, "OPENMEMD_HOOK_TIMEOUT": "1"}
    read_end, write_end = os.pipe()  # held open here: the hook never sees the end of stdin
    started = time.perf_counter()
    try:
        with subprocess.Popen(daemon.args("context", "--hook", "claude-code"), env=env,
                              stdin=read_end, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) as proc:
            os.close(read_end)
            out, err = proc.communicate(timeout=30)
    finally:
        os.close(write_end)
    took = time.perf_counter() - started
    assert (proc.returncode, out, err) == (0, b"", b"")
    assert took < 15
    [line] = logged(log_file)
    assert "no answer within 1 s" in line["reason"]
