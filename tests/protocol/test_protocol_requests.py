"""Request validation at the edge: every malformed input class gets the right error."""

from __future__ import annotations

import datetime
import json
from datetime import date

import pytest

from openmemd.protocol.requests import (
    DreamRequest,
    GetRequest,
    PingRequest,
    ProtocolError,
    SearchRequest,
    StatusRequest,
    SyncRequest,
    encode_reply,
    error_reply,
    ok_reply,
    parse_request,
    to_wire,
)


def parse(obj: object, **kw: int) -> object:
    raw = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return parse_request(raw, **kw).request


def bad(obj: object, fragment: str, **kw: int) -> None:
    raw = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    with pytest.raises(ProtocolError) as info:
        parse_request(raw, **kw)
    assert info.value.code == "bad_request"
    assert fragment in info.value.message, info.value.message


def test_valid_requests() -> None:
    assert parse({"op": "ping"}) == PingRequest()
    assert parse({"op": "status"}) == StatusRequest(agent=None, deep=False)
    assert parse({"op": "status", "deep": True, "agent": "a-1"}) == StatusRequest("a-1", True)
    assert parse({"op": "search", "query": "hello", "maxResults": 10, "minScore": 0.5,
                  "sources": ["memory", "sessions", "memory"], "explain": True}) == SearchRequest(
        query="hello", max_results=10, min_score=0.5, sources=("memory", "sessions"),
        explain=True)
    assert parse({"op": "search", "query": "x", "minScore": 1}) == SearchRequest(
        query="x", min_score=1.0)
    pinned = parse({"op": "search", "query": "yesterday", "today": "2026-07-10"})
    assert pinned == SearchRequest(query="yesterday", today=datetime.date(2026, 7, 10))
    assert to_wire(pinned) == {"op": "search", "query": "yesterday", "agent": "main",
                               "today": "2026-07-10"}
    assert "today" not in to_wire(SearchRequest(query="x"))
    assert parse({"op": "get", "path": "MEMORY.md", "from": 3, "lines": 2.0}) == GetRequest(
        path="MEMORY.md", from_line=3, lines=2)
    assert parse({"op": "get", "path": "MEMORY.md#L3", "namespace": "team/bob"}) == GetRequest(
        path="MEMORY.md#L3", namespace="team/bob")
    assert parse({"op": "sync"}) == SyncRequest(force=False, wait=True)
    assert parse({"op": "sync", "force": True, "wait": False}) == SyncRequest(force=True,
                                                                              wait=False)
    assert parse({"op": "dream"}) == DreamRequest(phase="all", dry_run=False)
    assert parse({"op": "dream", "phase": "rem", "dryRun": True}) == DreamRequest(
        phase="rem", dry_run=True)


def test_unknown_fields_are_tolerated_and_id_is_kept() -> None:
    env = parse_request(b'{"op":"ping","future":1,"id":"abc"}')
    assert env.request == PingRequest() and env.id == "abc"
    assert json.loads(ok_reply({"pong": True}, env.id)) == {"ok": True, "pong": True, "id": "abc"}


@pytest.mark.parametrize("raw, fragment", [
    (b"", "empty"),
    (b"\xff\xfe{}", "UTF-8"),
    (b"{not json", "not valid JSON"),
    (b'{"op": "search", "query": "x", "minScore": NaN}', "not valid JSON"),
    (b"[1, 2]", "JSON object"),
    (b'"ping"', "JSON object"),
    (b"null", "JSON object"),
    (b"[" * 100_000 + b"]" * 100_000, ""),
])
def test_malformed_bytes(raw: bytes, fragment: str) -> None:
    bad(raw, fragment)


def test_oversized() -> None:
    bad(json.dumps({"op": "ping", "pad": "x" * 2000}).encode(), "limit", max_bytes=1024)


@pytest.mark.parametrize("obj, fragment", [
    ({}, "missing 'op'"),
    ({"op": 3}, "'op' must be a string"),
    ({"op": "delete"}, "unknown op"),
    ({"op": "ping", "id": {"x": 1}}, "'id'"),
    ({"op": "search"}, "missing 'query'"),
    ({"op": "search", "query": 5}, "'query' must be a string"),
    ({"op": "search", "query": "   "}, "must not be empty"),
    ({"op": "search", "query": "x" * 4097}, "limit is 4096"),
    ({"op": "search", "query": "é" * 2049}, "limit is 4096"),
    ({"op": "search", "query": "a\x00b"}, "NUL"),
    ({"op": "search", "query": "x", "maxResults": 0}, "'maxResults' must be between 1 and 200"),
    ({"op": "search", "query": "x", "maxResults": 201}, "must be between 1 and 200"),
    ({"op": "search", "query": "x", "maxResults": "5"}, "must be a whole number"),
    ({"op": "search", "query": "x", "maxResults": True}, "must be a whole number"),
    ({"op": "search", "query": "x", "maxResults": 2.5}, "must be a whole number"),
    (b'{"op": "search", "query": "x", "maxResults": 1e400}', "must be a whole number"),
    ({"op": "search", "query": "x", "maxResults": 10**400}, "must be between 1 and 200"),
    ({"op": "search", "query": "x", "minScore": 1.5}, "'minScore' must be between 0 and 1"),
    ({"op": "search", "query": "x", "minScore": 10**400}, "must be between 0 and 1"),
    (b'{"op": "search", "query": "x", "minScore": -1e400}', "must be between 0 and 1"),
    ({"op": "search", "query": "x", "minScore": "high"}, "must be a number"),
    ({"op": "search", "query": "x", "sources": "memory"}, "list of"),
    ({"op": "search", "query": "x", "sources": []}, "list of"),
    ({"op": "search", "query": "x", "sources": ["web"]}, "list of"),
    ({"op": "search", "query": "x", "explain": "yes"}, "true or false"),
    ({"op": "search", "query": "x", "today": "2026-13-01"},
     "'today' must be a date as YYYY-MM-DD; got '2026-13-01'"),
    ({"op": "search", "query": "x", "today": "10/7/2026"}, "'today' must be a date as YYYY-MM-DD"),
    ({"op": "search", "query": "x", "today": 20260710}, "'today' must be a date as YYYY-MM-DD; "
     "got a number"),
    ({"op": "search", "query": "x", "agent": "../etc"}, "'agent'"),
    ({"op": "search", "query": "x", "agent": ""}, "'agent'"),
    ({"op": "get"}, "missing 'path'"),
    ({"op": "get", "path": ["a"]}, "'path' must be a string"),
    ({"op": "get", "path": "a", "from": 0}, "'from' must be at least 1 (got 0)"),
    ({"op": "get", "path": "a", "lines": -1}, "'lines' must be at least 1"),
    ({"op": "get", "path": "a", "lines": 2**40}, "'lines' must be between 1 and"),
    ({"op": "get", "path": "a", "namespace": 7}, "'namespace' must be a string"),
    ({"op": "get", "path": "a", "namespace": " "}, "'namespace' must not be empty"),
    ({"op": "sync", "force": 1}, "true or false"),
    ({"op": "sync", "wait": "no"}, "true or false"),
    ({"op": "dream", "phase": "nap"}, "'phase'"),
    ({"op": "dream", "dryRun": None, "phase": 3}, "'phase' must be one of"),
    ({"op": "status", "deep": "true"}, "true or false"),
])
def test_wrong_fields(obj: dict | bytes, fragment: str) -> None:
    bad(obj, fragment)


def test_replies_are_strict_json() -> None:
    assert json.loads(error_reply("not_found", "no such file")) == {
        "ok": False, "error": {"code": "not_found", "message": "no such file"}}
    assert json.loads(error_reply("weird", "x"))["error"]["code"] == "internal"
    with pytest.raises(ValueError):
        encode_reply({"ok": True, "score": float("nan")})


def test_context_request_parses_and_round_trips() -> None:
    from openmemd.protocol.requests import ContextRequest, to_wire

    assert parse({"op": "context"}) == ContextRequest()
    request = parse({"op": "context", "agent": "work", "today": "2026-02-28"})
    assert request == ContextRequest(agent="work", today=date(2026, 2, 28))
    assert to_wire(request) == {"op": "context", "agent": "work", "today": "2026-02-28"}
    assert to_wire(ContextRequest()) == {"op": "context", "agent": "main"}
    for today in ("2026-02-30", "2026-2-1", "yesterday", "2026-02-28\n", 20260228):
        bad({"op": "context", "today": today}, "'today' must be a date as YYYY-MM-DD")
