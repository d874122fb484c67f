"""OpenClaw's startup-context budgets in openclaw.json, as openmemd's `[context]` settings.

OpenClaw reads them from `agents.defaults`, not from memorySearch: `bootstrapMaxChars` and
`bootstrapTotalMaxChars` bound the bootstrap files (USER.md, MEMORY.md, ...) it puts in every
session's prompt; `startupContext.maxFileBytes` and `startupContext.maxTotalChars` bound the
daily notes it adds at the start of a new session. OpenClaw clamps the startupContext values
into [1, its cap] as whole numbers and ignores one that is not a number; so does this mapping,
so a value OpenClaw accepts never makes openmemd set the whole file aside. A bootstrap budget
of the wrong type is left to validation, whose message names OpenClaw's key.
"""

from __future__ import annotations

import math
from typing import Any

# OpenClaw's caps of the startup daily notes (STARTUP_MEMORY_*_CAP), openmemd's upper bounds too.
DAILY_MAX_FILE_BYTES_CAP = 64 * 1024
DAILY_TOTAL_MAX_CHARS_CAP = 50_000

# agents.defaults key (dotted) -> (openmemd's [context] key, OpenClaw's clamp: None = none)
_BUDGETS: dict[str, tuple[str, int | None]] = {
    "bootstrapMaxChars": ("bootstrap_max_chars", None),
    "bootstrapTotalMaxChars": ("bootstrap_total_max_chars", None),
    "startupContext.maxFileBytes": ("daily_max_file_bytes", DAILY_MAX_FILE_BYTES_CAP),
    "startupContext.maxTotalChars": ("daily_total_max_chars", DAILY_TOTAL_MAX_CHARS_CAP),
}


def startup_budgets(defaults: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """`{"context": {...}}` with the budgets `agents.defaults` sets (empty when it sets none);
    `names` gets OpenClaw's key of each."""
    out: dict[str, Any] = {}
    for key, (ours, cap) in _BUDGETS.items():
        parent, _, leaf = key.rpartition(".")
        node = defaults.get(parent) if parent else defaults
        if not isinstance(node, dict) or node.get(leaf) is None:
            continue
        value = node[leaf]
        if cap is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                continue  # OpenClaw uses its default then
            value = min(cap, max(1, math.trunc(value)))
        out[ours] = value
        names[f"context.{ours}"] = f"agents.defaults.{key}"
    return {"context": out} if out else {}
