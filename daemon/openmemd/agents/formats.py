"""Reading and writing the two formats agents keep settings in, so that only what openmemd
changes changes: JSON in the file's own indent and final newline (Claude Code writes
`JSON.stringify(…, null, 2)`), TOML through tomlkit (comments, order and spacing kept)."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from openmemd.agents.safe_edit import EditError, FileState

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_INDENT = re.compile(r"\{\s*?\n([ \t]+)\S")


def load_json(state: FileState) -> dict[str, Any]:
    """The file's object ({} when it is missing or blank); refused when it is anything else."""
    text = state.text
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EditError(f"{state.path}: not valid JSON (line {exc.lineno}, column {exc.colno}: "
                        f"{exc.msg}); left untouched") from None
    if not isinstance(value, dict):
        raise EditError(f"{state.path}: not a JSON object; left untouched")
    return value


def dump_json(value: dict[str, Any], like: FileState) -> bytes:
    text = like.text
    found = _INDENT.match(text)
    indent: str | int = found.group(1) if found else 2
    newline = text.endswith("\n") if like.exists and text.strip() else True
    out = json.dumps(value, indent=indent, ensure_ascii=False)
    return (out + ("\n" if newline else "")).encode("utf-8")


def load_toml(state: FileState) -> tomlkit.TOMLDocument:
    text = state.text
    try:
        tomllib.loads(text)  # the stricter reader the agents themselves resemble
        return tomlkit.parse(text)
    except (tomllib.TOMLDecodeError, TOMLKitError) as exc:
        raise EditError(f"{state.path}: not valid TOML ({exc}); left untouched") from None


def dump_toml(doc: tomlkit.TOMLDocument, state: FileState) -> bytes:
    text = tomlkit.dumps(doc)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # pragma: no cover - tomlkit's own bug
        raise EditError(f"{state.path}: the edited file would not be valid TOML ({exc}); "
                        "left untouched") from None
    return text.encode("utf-8")


def plain(value: Any) -> Any:
    """A tomlkit item as plain Python (dicts, lists, str, …), for comparing and recording."""
    return value.unwrap() if hasattr(value, "unwrap") else value
