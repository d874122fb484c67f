"""Rendering a session transcript (JSONL) into searchable text.

Only user and assistant messages are kept, one rendered line each ("User: …", "Assistant: …"),
secrets masked; `line_map[i]` is the 1-based JSONL line rendered line i came from, so search
results point at the transcript itself.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from openmemd.index.chunking import sha256_hex
from openmemd.index.redact import redact
from openmemd.index.transcripts import is_dreaming_narrative

_SPACE = re.compile(r"\s+")
# JSON escapes can spell a lone surrogate ("\ud800"), which no UTF-8 encoder (hashing, SQLite)
# accepts; in a Python str every surrogate code point is a lone one.
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class RenderedSession:
    text: str
    line_map: tuple[int, ...]
    hash: str  # of the text, the line map and the messages' timestamps
    timestamps: tuple[int, ...] = ()  # ms of each rendered line's message; 0 = not known


def _message_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b["text"] for b in content
                 if isinstance(b, dict) and b.get("type") == "text"
                 and isinstance(b.get("text"), str)]
        return " ".join(parts)
    return ""


def _timestamp_ms(value: object) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int) and abs(value) >= 2**63:  # too big for a float or SQLite
        return 0
    if isinstance(value, (int, float)):
        if not math.isfinite(value):  # 1e400 and NaN are valid JSON for Python
            return 0
        ms = value * 1000 if value < 1e11 else value
        return int(ms) if abs(ms) < 2**63 else 0
    if isinstance(value, str):
        from datetime import datetime
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
        except (ValueError, OverflowError, OSError):
            return 0
    return 0


def render_session(raw: str) -> RenderedSession:
    lines: list[str] = []
    line_map: list[int] = []
    stamps: list[int] = []
    if is_dreaming_narrative(raw):  # OpenClaw's dream-diary run: kept out of the index
        raw = ""
    for number, line in enumerate(raw.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a torn last line while the agent is writing, or junk: skip it
        if not isinstance(record, dict) or record.get("type") != "message":
            continue
        message = record.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        text = _SPACE.sub(" ", _message_text(message.get("content"))).strip()
        text = _SURROGATE.sub("\ufffd", text)
        if not text:
            continue
        label = "User" if message["role"] == "user" else "Assistant"
        lines.append(f"{label}: {redact(text)}")
        line_map.append(number)
        stamps.append(_timestamp_ms(message.get("timestamp", record.get("timestamp"))))
    text = "\n".join(lines)
    digest = sha256_hex(text + "\n" + ",".join(map(str, line_map)) + "\n"
                        + ",".join(map(str, stamps)))
    return RenderedSession(text, tuple(line_map), digest, tuple(stamps))
