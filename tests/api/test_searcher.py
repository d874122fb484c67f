"""The library's search checks a query by the protocol's own rule: one limit (4096 bytes of
UTF-8), whichever way a query comes in."""

from __future__ import annotations

import pytest

from openmemd.api import MemoryIndex
from openmemd.errors import BadRequestError


def test_a_query_has_the_protocols_limit_in_bytes(workspace, make_settings) -> None:
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe launch codeword is pelican.\n")
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        index.sync()
        assert index.search("  launch codeword  ")[0].path == "MEMORY.md"
        assert index.search("   ") == []
        # 1,500 CJK characters are 4,500 bytes: within a limit counted in characters, not
        # within the socket's and MCP's (bytes)
        with pytest.raises(BadRequestError, match="is 4500 bytes; the limit is 4096"):
            index.search("记" * 1500)
        with pytest.raises(BadRequestError, match="lone surrogate"):
            index.search("launch \ud800")
        with pytest.raises(BadRequestError, match="must be a string"):
            index.search(42)  # type: ignore[arg-type]
