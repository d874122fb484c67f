"""Frozen records that travel as camelCase JSON: one field per key, in the key's order.

A record subclasses `JsonRecord` and declares its fields as a dataclass does (annotations,
defaults); `to_json()` writes each field under its camelCase name (or `key=` where the wire
spells it otherwise), `from_json()` reads it back, tolerant of keys an older peer did not send
(the field's default, else an empty value of its type). Fields declared with
`omitted_if_none()` / `omitted_if_empty()` leave their key out, so optional keys keep their
presence on the wire.

Records behave as frozen dataclasses (keyword or positional construction, compared and hashed by
value, `replace`) but are not made by `dataclasses`: it generates and compiles six functions a
class at import, and the ~20 records of a `status` reply cost `openmemd status` a fifth of its
start-up. Here one generic `__init__` serves every record; `typing.dataclass_transform` tells
type checkers what the class statement means.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from typing import (
    Any,
    ClassVar,
    TypeVar,
    Union,
    dataclass_transform,
    get_args,
    get_origin,
    get_type_hints,
)

R = TypeVar("R", bound="JsonRecord")

_NONE, _EMPTY = "none", "empty"
_MISSING: Any = object()


class Field:
    """One field of a record: its default (or default factory) and how its key is written."""

    __slots__ = ("default", "default_factory", "key", "name", "omit", "skip")

    def __init__(self, default: Any = _MISSING, *,
                 default_factory: Callable[[], Any] | None = None, omit: str = "",
                 key: str = "", skip: bool = False) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.omit = omit
        self.key = key
        self.skip = skip

    @property
    def required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None

    def value(self) -> Any:
        return self.default_factory() if self.default_factory is not None else self.default


def field(*, default_factory: Callable[[], Any] | None = None, key: str = "") -> Any:
    """A field whose default is made anew for each record (a mapping), or (without one) a
    required field whose key the wire spells otherwise (`key`)."""
    return Field(default_factory=default_factory, key=key)


def omitted_if_none(default: Any = None, *, key: str = "") -> Any:
    """A field whose key is left out while its value is None."""
    return Field(default, omit=_NONE, key=key)


def omitted_if_empty(default: Any = (), *, key: str = "") -> Any:
    """A field whose key is left out while its value is empty or false."""
    return Field(default, omit=_EMPTY, key=key)


def not_in_json(default: Any) -> Any:
    """A field the record writes and reads itself (its own `to_json` / `from_json`)."""
    return Field(default, skip=True)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_value(value: Any) -> Any:
    if isinstance(value, JsonRecord):
        return value.to_json()
    if isinstance(value, tuple):
        return [json_value(item) for item in value]
    if isinstance(value, Mapping):
        return {k: json_value(v) for k, v in value.items()}
    return value


@dataclass_transform(field_specifiers=(Field, field, omitted_if_none, omitted_if_empty,
                                       not_in_json))
class JsonRecord:
    """Base of the records (see the module's docstring)."""

    __fields__: ClassVar[tuple[Field, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = list(cls.__fields__)  # a record's own base's fields come first
        # not inspect.get_annotations: importing inspect would cost `status` what dataclasses did
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            declared = cls.__dict__.get(name, _MISSING)
            spec = declared if isinstance(declared, Field) else Field(declared)
            spec.name = name
            if declared is not _MISSING:
                delattr(cls, name)  # the value lives on each record
            if spec.required and fields and not fields[-1].required:
                raise TypeError(f"{cls.__name__}.{name}: a field without a default follows "
                                "one with a default")
            fields.append(spec)
        cls.__fields__ = tuple(fields)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self.__fields__
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} arguments, "
                            f"{len(args)} given")
        for spec, value in zip(fields, args, strict=False):
            if spec.name in kwargs:
                raise TypeError(f"{type(self).__name__}() got {spec.name!r} twice")
            object.__setattr__(self, spec.name, value)
        for spec in fields[len(args):]:
            if spec.name in kwargs:
                value = kwargs.pop(spec.name)
            elif spec.required:
                raise TypeError(f"{type(self).__name__}() missing {spec.name!r}")
            else:
                value = spec.value()
            object.__setattr__(self, spec.name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got unexpected {sorted(kwargs)}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in self.__fields__)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot assign {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.__fields__)
        return f"{type(self).__name__}({shown})"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in self.__fields__:
            if f.skip:
                continue
            value = getattr(self, f.name)
            if (f.omit == _NONE and value is None) or (f.omit == _EMPTY and not value):
                continue
            out[f.key or camel(f.name)] = json_value(value)
        return out

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any]) -> R:
        hints = _hints(cls)
        kw: dict[str, Any] = {}
        for f in cls.__fields__:
            key = f.key or camel(f.name)
            if f.skip:
                continue
            if key in data:
                kw[f.name] = _read(hints[f.name], data[key])
            elif f.required:
                kw[f.name] = _empty(hints[f.name])
        return cls(**kw)


def replace(record: R, **changes: Any) -> R:
    """A copy of `record` with `changes` (as dataclasses.replace)."""
    values = {f.name: getattr(record, f.name) for f in record.__fields__}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(record).__name__} has no field {sorted(unknown)}")
    return type(record)(**(values | changes))


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
        (_, item) = get_args(tp)
        return {k: _read(item, v) for k, v in value.items()} if isinstance(value, Mapping) \
            else {}
    return value


def _empty(tp: Any) -> Any:
    if _optional(tp) is not None:
        return None
    if isinstance(tp, type) and issubclass(tp, JsonRecord):
        return tp.from_json({})
    return {tuple: (), Mapping: {}}.get(get_origin(tp)) if get_origin(tp) else tp()
