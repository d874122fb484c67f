"""Hostile and binary notes for the startup context's tests (issue 43, item 6): terminal
controls of every kind in a note, a binary note the indexer skips, a name holding an escape."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

TODAY, YESTERDAY = "2026-12-01", "2026-11-30"
# C0 but tab and newline, DEL, C1: nothing of these may reach an agent's prompt
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

HOSTILE = ("Dentist at 3pm.\x07\n"
           "\x1b[31mred alert\x1b[0m and \x1b[2J\x1b[H cleared\n"
           "\x1b]0;pwned title\x07after title\n"
           "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\\n"
           "over\rwrite\r\n"
           "del\x7f c1\x85\x9b31m csi8 \x0b\x0c\x1b(B\n"
           "tab\tkept\n")
HOSTILE_SHOWN = ("Dentist at 3pm.\nred alert and  cleared\nafter title\nlink\nover\nwrite\n"
                 "del c1 csi8 \ntab\tkept")
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x1b[31m secret pixels\n"
BINARY_WHY = "binary file (contains NUL bytes)"


def hostile_workspace(ws: Path) -> None:
    """A hostile note of today, a binary one of yesterday, a MEMORY.md with a NUL past the
    indexer's binary probe (so it is read, by the index too), a name holding an escape."""
    (ws / "memory" / f"{TODAY}.md").write_text(HOSTILE, encoding="utf-8")
    (ws / "memory" / f"{YESTERDAY}.md").write_bytes(BINARY)
    (ws / "MEMORY.md").write_bytes(b"- fact one\n" + b"filler line\n" * 800
                                   + b"nul\x00here \x1b[1mbold\x1b[0m\n")
    (ws / "memory" / f"{TODAY}-\x1b[31mred.md").write_text("named\x07 in red\n")


def controls_in(value: Any) -> list[str]:
    """Every string in a reply (keys and values) that holds a control character."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in controls_in(k) + controls_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in controls_in(v)]
    return [value] if isinstance(value, str) and CONTROL.search(value) else []
