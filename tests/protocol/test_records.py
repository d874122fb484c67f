"""JsonRecord (protocol/records.py): frozen, by-value records with their JSON, made without
the dataclass machinery."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from openmemd.protocol.records import (
    JsonRecord,
    field,
    not_in_json,
    omitted_if_empty,
    omitted_if_none,
    replace,
)


class Inner(JsonRecord):
    """A part."""

    ok: bool
    count: int = 0


class Outer(JsonRecord):
    """A whole."""

    name: str
    inner: Inner | None
    tags: tuple[str, ...]
    facts: Mapping[str, Any] = field(default_factory=dict)
    note: str | None = omitted_if_none(default=None)
    left_out: bool = omitted_if_empty(default=False, key="leftOut")
    private: int = not_in_json(default=7)


def test_built_like_a_frozen_dataclass() -> None:
    a = Outer("x", Inner(True), ("t",))
    assert (a.name, a.inner, a.tags, a.facts, a.note, a.left_out, a.private) == (
        "x", Inner(ok=True, count=0), ("t",), {}, None, False, 7)
    assert a == Outer(name="x", inner=Inner(True, 0), tags=("t",)) and a != Inner(True)
    assert Outer("x", None, ()).facts is not Outer("y", None, ()).facts  # a factory each
    assert hash(Inner(True, 2)) == hash(Inner(True, 2))
    assert repr(Inner(False, 3)) == "Inner(ok=False, count=3)"
    with pytest.raises(AttributeError, match="frozen"):
        a.name = "y"
    assert replace(a, note="n").note == "n" and a.note is None
    make: Any = Inner  # the calls below are wrong on purpose
    for bad in (lambda: make(), lambda: make(True, 1, 2), lambda: make(True, ok=False),
                lambda: make(True, nope=1), lambda: replace(a, nope=1)):
        with pytest.raises(TypeError):
            bad()


def test_a_required_field_after_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="follows"):
        class Bad(JsonRecord):
            first: int = 0
            second: int  # type: ignore[misc]


def test_json_both_ways() -> None:
    a = Outer("x", Inner(True, 2), ("a", "b"), {"k": 1}, left_out=True, private=1)
    wire = a.to_json()
    assert wire == {"name": "x", "inner": {"ok": True, "count": 2}, "tags": ["a", "b"],
                    "facts": {"k": 1}, "leftOut": True}  # note None and private: left out
    assert Outer.from_json(wire) == replace(a, private=7)
    # an older peer's reply: missing keys take the default, else an empty value of the type
    assert Outer.from_json({"name": "y"}) == Outer("y", None, ())
