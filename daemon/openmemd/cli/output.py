"""What every command's `--json` prints: one style (indented, non-ASCII kept) for all."""

from __future__ import annotations

import json
from typing import Any


def print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))
