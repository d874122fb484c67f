"""Starting `openmemd mcp` under the MCP SDK's own stdio client (shared by the MCP tests)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

# The SDK is in the test extras (pip install -e '.[test]'): missing, these tests fail, not skip.
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def server_args(workspace: Path, state_dir: Path, config: Path, *extra: str) -> list[str]:
    return ["-m", "openmemd", "mcp", "--workspace", str(workspace), "--state-dir",
            str(state_dir), "--config", str(config), *extra]


@asynccontextmanager
async def mcp_session(workspace: Path, state_dir: Path, config: Path, *, endpoint: str,
                      env: dict[str, str] | None = None, extra: tuple[str, ...] = ()
                      ) -> AsyncIterator[ClientSession]:
    """A ready (initialized) session; the server's stderr is kept in a temp file."""
    params = StdioServerParameters(
        command=sys.executable, args=server_args(workspace, state_dir, config, *extra),
        env={"OPENMEMD_ENDPOINT": endpoint, "HF_HUB_OFFLINE": "1", **(env or {})})
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, args: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    """A successful tool call's JSON (fails the test on a tool error)."""
    result = await session.call_tool(tool, args or {})
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    payload = json.loads(text)
    assert result.structured_content == payload
    return payload


async def call_error(session: ClientSession, tool: str, args: Any) -> str:
    """A tool call that must fail cleanly: its one message."""
    result = await session.call_tool(tool, args)
    assert result.is_error, result
    text = result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text
    return text


# -- raw JSON-RPC lines: what the SDK client cannot send (bad JSON, lone surrogates) ----------
def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


INIT = _line({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}})
DEEP = b"[" * 100_000 + b"]" * 100_000
HUGE = b'"' + b"x" * (5 << 20) + b'"'  # over the 4 MiB a message may have

# (line, the error code, the id replied to, what the message says)
BAD_LINES: list[tuple[bytes, int, Any, str]] = [
    (b'{"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "memory_add", '
     b'"arguments": {"text": "half an emoji \\ud83d"}}}',
     -32700, 10, "lone surrogate escape \\ud83d"),
    (b'{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": '
     b'"memory_search", "arguments": {"query": ' + DEEP + b'}}}', -32700, 11, "recursion limit"),
    (b'{"jsonrpc": "2.0", "method": "ping", "params": {"x": ' + DEEP + b'}, "id": "last"}',
     -32700, "last", "recursion limit"),
    (b'{"jsonrpc": "2.0", "method": "ping", "id": 12, "params": {', -32700, 12, "Parse error"),
    (b"this is not json", -32700, None, "Parse error"),
    (b'{"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": [1]}',
     -32600, 13, "'params': Input should be an object"),
    (b'[{"jsonrpc": "2.0", "id": 14, "method": "ping"}]', -32600, None, "batches"),
    # a response's id is the client's own numbering: an error with it would fail its request
    (b'{"jsonrpc": "2.0", "id": 15, "result": "done"}', -32600, None, "'result'"),
    (b'{"jsonrpc": "2.0", "method": "ping", "params": {"pad": ' + HUGE + b'}, "id": 16}',
     -32600, 16, "over the 4 MiB (4194304 bytes) limit of one MCP message"),
]


class RawSession:
    """`openmemd mcp` (a started process) driven by JSON-RPC lines written as bytes."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc, self._stdin, self._out = proc, proc.stdin, proc.stdout.fileno()
        self._buffer = b""

    def send(self, line: bytes) -> None:
        self._stdin.write(line + b"\n")
        self._stdin.flush()

    def reply(self) -> dict[str, Any]:
        """The next line on stdout; a hang guard only (a missing reply would block forever)."""
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self._out], [], [], 120)
            assert ready, "no reply from openmemd mcp"
            chunk = os.read(self._out, 65536)
            assert chunk, "openmemd mcp closed its stdout"
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def initialize(self) -> None:
        self.send(INIT)
        assert self.reply()["result"]["serverInfo"]["name"] == "openmemd"
        self.send(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def search(self, rid: int, query: str) -> dict[str, Any]:
        """memory_search's reply, sent after the line before it was answered."""
        self.send(_line({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
            "name": "memory_search", "arguments": {"query": query}}}))
        reply = self.reply()
        assert reply["id"] == rid and not reply["result"]["isError"], reply
        return reply["result"]["structuredContent"]


def every_bad_line_is_answered_and_the_session_goes_on(proc: subprocess.Popen[bytes]) -> str:
    """Each of BAD_LINES gets its error, and a search right after it its results (MEMORY.md
    must mention a pelican); then stdin closes and the process exits 0. Its stderr."""
    session = RawSession(proc)
    session.initialize()
    for n, (line, code, rid, says) in enumerate(BAD_LINES):
        session.send(line)
        reply = session.reply()  # the error comes first: the line was read before the call
        assert reply["id"] == rid and reply["error"]["code"] == code, (line[:80], reply)
        assert says in reply["error"]["message"], reply
        assert "\n" not in reply["error"]["message"] and len(reply["error"]["message"]) < 300
        found = session.search(100 + n, "pelican")  # the session goes on
        assert found["results"][0]["path"] == "MEMORY.md"
    proc.stdin.close()  # type: ignore[union-attr]
    assert proc.wait(60) == 0
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert "Traceback" not in stderr
    return stderr
