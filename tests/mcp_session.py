"""Starting `openmemd mcp` under the MCP SDK's own stdio client (shared by the MCP tests)."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.client.stdio import stdio_client

# The SDK is in the test extras (pip install -e '.[test]'): missing, these tests fail, not skip.
from mcp import ClientSession, StdioServerParameters


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
