"""The index identity row (`StoreWriter.write_meta` / `StoreReader.read_meta`) as stored text.

Both backends keep it as one JSON object, as OpenClaw's `meta` table does; anything else in
that row (damaged, or written by another tool) reads as "no identity", so the index is rebuilt
rather than trusted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def meta_to_text(meta: Mapping[str, Any]) -> str:
    return json.dumps(dict(meta), sort_keys=True)


def meta_from_text(text: object) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
