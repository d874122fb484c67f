"""Frozen records that travel as camelCase JSON: one field per key, in the key's order.

A record subclasses `JsonRecord` and is a frozen dataclass; `to_json()` writes each field
under its camelCase name (or `key=` where the wire spells it otherwise), `from_json()` reads
it back, tolerant of keys an older peer did not send (the field's default, else an empty
value of its type). Fields declared with `omitted_if_none()` / `omitted_if_empty()` leave
their key out, so optional keys keep their presence on the wire.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

R = TypeVar("R", bound="JsonRecord")

_NONE, _EMPTY = "none", "empty"


def omitted_if_none(default: Any = None, *, key: str = "") -> Any:
    """A field whose key is left out while its value is None."""
    return dataclasses.field(default=default, metadata={"omit": _NONE, "key": key})


def omitted_if_empty(default: Any = (), *, key: str = "") -> Any:
    """A field whose key is left out while its value is empty or false."""
    return dataclasses.field(default=default, metadata={"omit": _EMPTY, "key": key})


def not_in_json(default: Any) -> Any:
    """A field the record writes and reads itself (its own `to_json` / `from_json`)."""
    return dataclasses.field(default=default, metadata={"skip": True})


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_value(value: Any) -> Any:
    if isinstance(value, JsonRecord):
        return value.to_json()
    if isinstance(value, tuple):
        return [json_value(item) for item in value]
    if isinstance(value, Mapping):
        return dict(value)
    return value


class JsonRecord:
    """Base of the records; subclasses are `@dataclass(frozen=True)`."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.metadata.get("skip"):
                continue
            value = getattr(self, f.name)
            omit = f.metadata.get("omit")
            if (omit == _NONE and value is None) or (omit == _EMPTY and not value):
                continue
            out[f.metadata.get("key") or camel(f.name)] = json_value(value)
        return out

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any]) -> R:
        hints = _hints(cls)
        kw: dict[str, Any] = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            key = f.metadata.get("key") or camel(f.name)
            if f.metadata.get("skip"):
                continue
            if key in data:
                kw[f.name] = _read(hints[f.name], data[key])
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                kw[f.name] = _empty(hints[f.name])
        return cls(**kw)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]


def _optional(tp: Any) -> Any | None:
    """`X` of `X | None`, else None."""
    if get_origin(tp) in (Union, types.UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        if len(inner) == 1:
            return inner[0]
    return None


def _read(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    tp = _optional(tp) or tp
    if isinstance(tp, type) and issubclass(tp, JsonRecord):
        return tp.from_json(value) if isinstance(value, Mapping) else None
    if get_origin(tp) is tuple:
        (item, _) = get_args(tp)
        return tuple(_read(item, v) for v in value) if isinstance(value, list) else ()
    if get_origin(tp) is Mapping:
        return dict(value) if isinstance(value, Mapping) else {}
    return value


def _empty(tp: Any) -> Any:
    if _optional(tp) is not None:
        return None
    if isinstance(tp, type) and issubclass(tp, JsonRecord):
        return tp.from_json({})
    return {tuple: (), Mapping: {}}.get(get_origin(tp)) if get_origin(tp) else tp()
