"""An MCP session's input, line by line, in front of the SDK's stdio transport: every line the
SDK would drop unanswered gets its JSON-RPC error here, and the session goes on.

The SDK's stdio reader validates each line (`jsonrpc_message_adapter`) and silently drops one
that fails: a lone surrogate escape ("\\ud800"), arrays nested deeper than its parser allows
(about 250), anything that is not JSON or not a JSON-RPC message. Its client then waits for a
reply forever. Both ways a session runs read through `JsonRpcLines` (mcp/server.py on stdin,
server/mcp_session.py on the daemon's socket), so both answer alike: -32700 (parse error) or
-32600 (invalid request), with the request's id when one can be found, else null. A line over
MAX_LINE is read through without being held and answered as too large (for `tools/call` a tool
error, which the model reads). A line that passes goes on unchanged; the SDK validates it again
(microseconds), so what it accepts stays its decision.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import ByteReceiveStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from openmemd.log import get_logger

log = get_logger(__name__)

MAX_LINE = 4 * 1024 * 1024  # one JSON-RPC message, in bytes
LIMIT = f"the {MAX_LINE >> 20} MiB ({MAX_LINE} bytes) limit of one MCP message"
MAX_MEMBER = 1024  # a top-level member kept to read an id or a method from
_WANTED = (b'"id"', b'"method"')  # the members that say what to answer
_OBJECT_START = re.compile(rb"[ \t\r]*\{")
# What changes the scanner's state outside a string: a run of brackets is one step (an
# array nested 100,000 deep is then two steps, not 200,000).
_OUTSIDE = re.compile(rb'[\[{]+|[\]}]+|[",]')
_INSIDE = re.compile(rb'["\\]')  # ... and inside one
_LONE_SURROGATE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


class _TopLevel:
    """A JSON object's top-level "id" and "method", from a line fed in pieces: found without
    parsing (or holding) the rest, which may be huge, nested too deep or not JSON at all."""

    def __init__(self, line_start: bytes | bytearray) -> None:
        self.members: dict[str, Any] = {}
        self._done = not _OBJECT_START.match(line_start)  # not an object: no id to find
        self._depth = 0
        self._in_string = self._escaped = False
        self._member: bytearray | None = bytearray()  # None: too long or nested, skipped

    @classmethod
    def of(cls, line: bytes) -> dict[str, Any]:
        scan = cls(line)
        scan.feed(line)
        return scan.members

    def feed(self, data: bytes | bytearray) -> None:
        pos = 0
        while pos < len(data) and not self._done:
            if self._escaped:  # the escaped byte: never a quote that ends the string
                self._escaped = False
                self._keep(data[pos:pos + 1])
                pos += 1
                continue
            found = (_INSIDE if self._in_string else _OUTSIDE).search(data, pos)
            end = len(data) if found is None else found.start()
            self._keep(data[pos:end])
            if found is None:
                return
            pos = found.end()
            self._step(data[end:pos])

    def _step(self, token: bytes | bytearray) -> None:
        if self._in_string:
            self._keep(token)
            self._escaped = token == b"\\"
            self._in_string = self._escaped
        elif token == b'"':
            self._in_string = True
            self._keep(token)
        elif token[:1] in (b"{", b"["):
            self._depth += len(token)
            if self._depth >= 2:
                self._member = None  # a nested value: neither an id nor a method
        elif token[:1] in (b"}", b"]"):
            nested = min(len(token), self._depth - 1)  # closings inside the top-level object
            self._depth -= nested
            if len(token) > nested:  # and the object's own
                self._end_member()
                self._done = True
        elif self._depth == 1:  # a comma between the object's members
            self._end_member()

    def _keep(self, data: bytes | bytearray) -> None:
        if self._depth == 1 and self._member is not None and data:
            if len(self._member) + len(data) > MAX_MEMBER:
                self._member = None
            else:
                self._member += data

    def _end_member(self) -> None:
        member, self._member = self._member, bytearray()
        if member is None or not member.lstrip().startswith(_WANTED):
            return
        with suppress(ValueError):
            self.members.update(json.loads(b"{" + member + b"}"))
        self._done = len(self.members) == len(_WANTED)  # the rest does not matter


def _request_id(members: dict[str, Any]) -> int | str | None:
    """The id to answer with: a request's (it names a method), else null. A response's id is
    in the client's own numbering: an error with it would fail the client's own request."""
    rid = members.get("id")
    if "method" not in members or isinstance(rid, bool) or not isinstance(rid, int | str):
        return None
    if isinstance(rid, str):
        try:
            rid.encode()
        except UnicodeEncodeError:  # itself a lone surrogate: cannot be sent back
            return None
    return rid


def _error(rid: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=rid, error=types.ErrorData(code=code,
                                                                          message=message))


def rejection(line: bytes, exc: ValidationError) -> types.JSONRPCError:
    """The reply to a line the SDK cannot take: why, in one line, to the request's id."""
    rid = _request_id(_TopLevel.of(line))
    first = exc.errors(include_url=False)[0]
    if first["type"] == "json_invalid":
        lone = _LONE_SURROGATE.search(line)
        why = (f"a lone surrogate escape {lone.group().decode()} (half of a UTF-16 pair) "
               "is not valid Unicode" if lone else first["msg"].removeprefix("Invalid JSON: "))
        return _error(rid, types.PARSE_ERROR, f"Parse error: {why}")
    return _error(rid, types.INVALID_REQUEST, f"Invalid request: {_shape_problem(line, exc)}")


def _shape_problem(line: bytes, exc: ValidationError) -> str:
    """What makes this JSON no JSON-RPC message, judged as the kind it looks like."""
    try:
        message = json.loads(line.decode("utf-8", "replace"))  # as the SDK read it
    except (ValueError, RecursionError):
        message = None
    if not isinstance(message, dict):
        return "a JSON-RPC message is one JSON object (batches are not supported)"
    kind = (("JSONRPCRequest" if "id" in message else "JSONRPCNotification")
            if "method" in message else "JSONRPCError" if "error" in message
            else "JSONRPCResponse" if "result" in message else None)
    for error in exc.errors(include_url=False):
        if kind is not None and error["loc"][:1] == (kind,):
            where = ".".join(str(part) for part in error["loc"][1:])
            return f"'{where}': {error['msg']}" if where else error["msg"]
    return "it needs a 'method' (a request or notification), or a 'result' or 'error'"


def too_large(size: int, members: dict[str, Any]
              ) -> types.JSONRPCError | types.JSONRPCResponse:
    """The reply to a line over MAX_LINE: a tool error for a tool call (the model reads it
    and can send less), else a JSON-RPC error."""
    rid = _request_id(members)
    text = f"this call is {size} bytes, over {LIMIT}; nothing was done"
    if rid is None or members.get("method") != "tools/call":
        return _error(rid, types.INVALID_REQUEST, f"Request too large: {text}")
    result = types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
    return types.JSONRPCResponse(jsonrpc="2.0", id=rid, result=result.model_dump(
        by_alias=True, exclude_none=True, mode="json"))


class JsonRpcLines:
    """A session's input as the SDK's stdio transport reads it (`async for line in stdin`):
    only the lines it can take; every other one is answered here, on the session's own write
    stream (given by `answer_with` once the transport made it)."""

    def __init__(self, source: ByteReceiveStream) -> None:
        self._source = source
        self._buffer = bytearray()
        self._replies: Any = None
        self._ready = anyio.Event()

    def answer_with(self, write_stream: Any) -> None:
        self._replies = write_stream
        self._ready.set()

    def __aiter__(self) -> JsonRpcLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._line()
            if line is None or not line.strip():
                continue  # too large (answered), or blank
            text = line.decode("utf-8", "replace")  # as the SDK's own stdin reader decodes
            try:
                types.jsonrpc_message_adapter.validate_json(text, by_name=False)
            except ValidationError as exc:
                await self._answer(rejection(line, exc))
                continue
            return text

    async def _line(self) -> bytes | None:
        """The next line without its newline; None for one over MAX_LINE (answered)."""
        start = 0
        while (end := self._buffer.find(b"\n", start)) < 0:
            if len(self._buffer) > MAX_LINE:
                await self._skip_too_large()
                return None
            start = len(self._buffer)
            if not await self._fill():
                if not self._buffer:
                    raise StopAsyncIteration
                end = len(self._buffer)  # the last line, without its newline
                break
        line = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        return line

    async def _skip_too_large(self) -> None:
        """Read through the line, holding one chunk at a time, and answer it."""
        scan, size = _TopLevel(self._buffer), 0
        while (end := self._buffer.find(b"\n")) < 0:
            scan.feed(self._buffer)
            size += len(self._buffer)
            self._buffer.clear()
            if not await self._fill():
                raise StopAsyncIteration  # the client left in the middle of it
        scan.feed(self._buffer[:end])
        del self._buffer[:end + 1]
        await self._answer(too_large(size + end, scan.members))

    async def _fill(self) -> bool:
        try:
            self._buffer += await self._source.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        return True

    async def _answer(self, reply: types.JSONRPCError | types.JSONRPCResponse) -> None:
        why = (reply.error.message if isinstance(reply, types.JSONRPCError)
               else reply.result["content"][0]["text"])
        log.warning("mcp_message_refused", id=reply.id, reason=why[:200])
        await self._ready.wait()
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self._replies.send(SessionMessage(reply))


@asynccontextmanager
async def session_streams(source: ByteReceiveStream, stdout: Any = None
                          ) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport reading `source` through JsonRpcLines and writing `stdout`
    (an object with async `write` and `flush`; None: the process's stdout, which the SDK
    takes over so that nothing else writes to it)."""
    lines = JsonRpcLines(source)
    stdin: Any = lines
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        lines.answer_with(write_stream)
        yield read_stream, write_stream
