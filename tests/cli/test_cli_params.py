"""One validation, one style: the command line refuses what the protocol refuses, naming flags
(in-process here; through the real daemon in test_daemon_e2e.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from openmemd.cli import main
from openmemd.protocol.requests import ProtocolError, parse_request

# (command line, the CLI's message, the same request on the wire, the protocol's message)
CASES = [
    (["search", "tea", "--min-score", "5"], "--min-score must be between 0 and 1 (got 5)",
     {"op": "search", "query": "tea", "minScore": 5},
     "'minScore' must be between 0 and 1 (got 5)"),
    (["search", "tea", "--min-score", "nan"], "--min-score must be between 0 and 1 (got nan)",
     None, None),
    (["search", "tea", "--max-results", "-1"],
     "--max-results must be between 1 and 200 (got -1)",
     {"op": "search", "query": "tea", "maxResults": -1},
     "'maxResults' must be between 1 and 200 (got -1)"),
    (["search", ""], "the query must not be empty", {"op": "search", "query": ""},
     "'query' must not be empty"),
    (["search", " "], "the query must not be empty", None, None),
    # undecodable bytes in argv arrive as lone surrogates (surrogateescape)
    (["search", "caf\udce9"], "the query must be valid Unicode text (a lone surrogate at "
     "character 3)", {"op": "search", "query": "caf\udce9"},
     "'query' must be valid Unicode text (a lone surrogate at character 3)"),
    (["get", "memory/\udcff.md"], "the path must be valid Unicode text (a lone surrogate at "
     "character 7)", None, None),
    (["get", "MEMORY.md", "--from", "0"], "--from must be at least 1 (got 0)",
     {"op": "get", "path": "MEMORY.md", "from": 0}, "'from' must be at least 1 (got 0)"),
    (["get", "MEMORY.md", "--lines", "0"], "--lines must be at least 1 (got 0)",
     {"op": "get", "path": "MEMORY.md", "lines": 0}, "'lines' must be at least 1 (got 0)"),
    (["search", "tea", "--today", "tomorrow"],
     "--today must be a date as YYYY-MM-DD; got 'tomorrow'",
     {"op": "search", "query": "tea", "today": "tomorrow"},
     "'today' must be a date as YYYY-MM-DD; got 'tomorrow'"),
    (["search", "tea", "--agent", "../x"], "--agent must be 1-64 letters, digits, - or _",
     {"op": "search", "query": "tea", "agent": "../x"},
     "'agent' must be 1-64 letters, digits, - or _"),
]


@pytest.fixture
def run(make_settings, workspace: Path, tmp_path: Path, capsys):
    make_settings()
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe favourite tea is genmaicha.\n")

    def run(*args: str, endpoint: str = f"ipc://{tmp_path}/none.sock") -> tuple[int, str, str]:
        code = main([*args, "--config", str(tmp_path / "config.toml"), "--endpoint", endpoint])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.mark.parametrize("argv, message, request_, wire_message", CASES,
                         ids=[" ".join(c[0]) for c in CASES])
def test_bad_parameters_are_usage_errors_named_by_flag(run, argv, message, request_,
                                                       wire_message) -> None:
    code, out, err = run(*argv)
    assert (code, out, err) == (2, "", f"openmemd: {message}\n")
    if request_ is not None:  # the daemon refuses the same value with the same words
        with pytest.raises(ProtocolError) as info:
            parse_request(json.dumps(request_).encode())
        assert info.value.message == wire_message


def test_good_parameters_still_work(run) -> None:
    code, out, _ = run("search", "genmaicha", "--min-score", "0", "--max-results", "200")
    assert code == 0 and "MEMORY.md" in out
    code, out, _ = run("search", "tea", "yesterday", "--today", "2026-07-10")
    assert code == 0 and 'Dates: 2026-07-09 ("yesterday")' in out
    code, out, _ = run("get", "MEMORY.md", "--from", "3", "--lines", "1")
    assert code == 0 and out == "The favourite tea is genmaicha.\n"


def test_a_query_packed_with_dates_says_where_reading_stopped(run) -> None:
    code, out, _ = run("search", "tea " + "Jan 1 " * 100, "--today", "2026-07-10")
    assert code == 0 and "dates read in the query's first 100 characters only" in out


@pytest.mark.parametrize("endpoint", ["bogus://x", "tcp://nohost", "ipc://"])
def test_bogus_endpoint_is_one_line_exit_2(run, endpoint: str) -> None:
    code, out, err = run("search", "tea", endpoint=endpoint)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"openmemd: endpoint {endpoint}")


def test_bogus_endpoint_through_the_real_command(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "openmemd", "search", "x", "--endpoint", "bogus://x",
         "--workspace", str(tmp_path), "--state-dir", str(tmp_path / "s")],
        capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("openmemd: endpoint bogus://x: unsupported endpoint")
    assert proc.stderr.count("\n") == 1
