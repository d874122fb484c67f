"""The agents' own command lines from npm (`@anthropic-ai/claude-code`, `@openai/codex`),
installed at test time under one prefix: `$OPENMEMD_AGENT_CLIS`, else `.agent-clis/` in the
repository (`.ci/run` installs them there). Absent locally, the tests that need them skip
with the command that installs them; with `OPENMEMD_REQUIRE_AGENT_CLIS=1` (CI) they fail."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "npm install --prefix .agent-clis @anthropic-ai/claude-code @openai/codex"


def prefix() -> Path:
    return Path(os.environ.get("OPENMEMD_AGENT_CLIS") or ROOT / ".agent-clis")


def agent_cli(name: str) -> Path:
    """The path of `claude` or `codex`; skips (fails in CI) when it is not installed."""
    found = prefix() / "node_modules" / ".bin" / name
    if not os.access(found, os.X_OK):
        why = f"{name} is not installed under {prefix()}: {INSTALL}"
        if os.environ.get("OPENMEMD_REQUIRE_AGENT_CLIS") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return found
