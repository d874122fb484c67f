"""The Memory and Dreams view ops on the wire: each request survives to_wire -> parse, each
reply to_json -> from_json."""

from __future__ import annotations

import json

import pytest

from openmemd.protocol.replies import (
    DemoteReply,
    DreamsFileText,
    DreamsReply,
    MemoryEntry,
    MemoryReply,
    read_reply,
)
from openmemd.protocol.requests import (
    DemoteRequest,
    DreamsRequest,
    MemoryRequest,
    ProtocolError,
    UndoRequest,
    parse_request,
    to_wire,
)


@pytest.mark.parametrize("request_", [
    MemoryRequest(), MemoryRequest("other"), DemoteRequest("memory:memory/a.md:1-2"),
    DemoteRequest("k", "main", "abcd"), UndoRequest("k", "other"), DreamsRequest()])
def test_requests_round_trip(request_: object) -> None:
    wire = to_wire(request_)  # type: ignore[arg-type]
    assert parse_request(json.dumps(wire).encode()).request == request_


def test_demote_needs_a_key() -> None:
    with pytest.raises(ProtocolError, match="missing 'key'"):
        parse_request(b'{"op":"demote"}')


def test_replies_round_trip() -> None:
    memory = MemoryReply("MEMORY.md", True, 120, 121, 20_000, (
        MemoryEntry("note", 3, "- tea"),
        MemoryEntry("promoted", 8, "VLAN 42", key="k", digest="d", source="m.md#L5",
                    score=0.8, recalls=9, queries=("q1",), recall_days=("2026-04-06",))))
    assert memory.to_json()["bytes"] == 121
    assert read_reply(MemoryRequest(), json.loads(json.dumps(memory.to_json()))) == memory
    moved = DemoteReply("k", "memory/archive/MEMORY-2026-04-10.md", 40, exact=False)
    assert read_reply(UndoRequest("k"), moved.to_json()) == moved
    assert read_reply(DemoteRequest("k"), moved.to_json()) == moved
    dreams = {"diary": DreamsFileText("DREAMS.md", None, None, "x").to_json(), "reports": [],
              "tonight": {"workspace": "/w", "day": "2026-04-10", "timezone": "UTC",
                          "startedAt": "t", "dryRun": True, "phases": ["deep"],
                          "light": {}, "rem": {}, "deep": {"ran": True}}}
    reply = read_reply(DreamsRequest(), dreams)
    assert isinstance(reply, DreamsReply) and reply.tonight.dry_run
    assert DreamsReply.from_json(reply.to_json()) == reply
