"""The dashboard's views: each asks the daemon's `Handler` (the one the socket and MCP use)
with a typed request and returns its template and what the template shows. No second way
into the index: a page reads only what a request answers."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from openmemd.config.locate import DEFAULT_AGENT
from openmemd.protocol.handler import Handler
from openmemd.protocol.replies import GetReply, Hit, SearchReply, expect
from openmemd.protocol.requests import GetRequest, SearchRequest, StatusRequest
from openmemd.protocol.status import DaemonStatus

MEMORY_BUDGET_CHARS = 20_000  # OpenClaw's bootstrap budget for MEMORY.md (bootstrapMaxChars)
MAX_QUERY_CHARS = 2_000


@dataclass(frozen=True)
class Page:
    template: str
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Line:
    number: int
    text: str
    marked: bool


def status_page(handler: Handler, params: Mapping[str, str]) -> Page:
    status = expect(handler(StatusRequest()), DaemonStatus)
    return Page("status.html", {"status": status, "title": "Status"})


def search_page(handler: Handler, params: Mapping[str, str]) -> Page:
    query = params.get("q", "").strip()[:MAX_QUERY_CHARS]
    agent = params.get("agent") or DEFAULT_AGENT
    values: dict[str, Any] = {"title": "Search", "query": query, "agent": agent}
    if query:
        reply = expect(handler(SearchRequest(query, agent=agent, explain=True)), SearchReply)
        values.update(reply=reply, hits=[(hit, hit_lines(hit), note_link(hit, agent))
                                         for hit in reply.results])
    return Page("search.html", values)


def note_page(handler: Handler, params: Mapping[str, str]) -> Page:
    path = params.get("path", "")
    agent = params.get("agent") or DEFAULT_AGENT
    cited = parse_range(params.get("lines", ""))
    reply = expect(handler(GetRequest(path, agent=agent)), GetReply)
    numbers = reply.line_numbers or itertools.count(reply.from_line)
    lines = [Line(n, text, cited is not None and cited[0] <= n <= cited[1])
             for n, text in zip(numbers, reply.text.removesuffix("\n").split("\n"), strict=False)]
    return Page("note.html", {"title": path, "path": reply.path, "lines": lines,
                              "cited": cited, "agent": agent})


def memory_page(handler: Handler, params: Mapping[str, str]) -> Page:
    """For now MEMORY.md as it is, against its budget (entries, provenance and demote come
    with the Memory protocol ops)."""
    agent = params.get("agent") or DEFAULT_AGENT
    reply = expect(handler(GetRequest("MEMORY.md", agent=agent)), GetReply)
    chars = len(reply.text)
    return Page("memory.html", {"title": "Memory", "text": reply.text, "chars": chars,
                                "budget": MEMORY_BUDGET_CHARS,
                                "percent": min(100, round(100 * chars / MEMORY_BUDGET_CHARS))})


def dreams_page(handler: Handler, params: Mapping[str, str]) -> Page:
    """For now dreaming's schedule and last sweep from `status` (DREAMS.md and the phase
    reports come with the Dreams protocol ops)."""
    status = expect(handler(StatusRequest()), DaemonStatus)
    return Page("dreams.html", {"title": "Dreams", "status": status})


PAGES = {"/": status_page, "/search": search_page, "/note": note_page,
         "/memory": memory_page, "/dreams": dreams_page}


def hit_lines(hit: Hit) -> list[Line]:
    """The snippet's lines, numbered from the hit's start, its focus lines marked."""
    focus = hit.focus
    lo, hi = (focus.start_line, focus.end_line) if focus else (hit.start_line, hit.end_line)
    return [Line(n, text, lo <= n <= hi)
            for n, text in enumerate(hit.snippet.split("\n"), start=hit.start_line)]


def note_link(hit: Hit, agent: str = DEFAULT_AGENT) -> str:
    """`/note?path=…&lines=A-B#LA-LB`: the fragment scrolls there, `lines` marks them."""
    lo, hi = (hit.focus.start_line, hit.focus.end_line) if hit.focus else \
        (hit.start_line, hit.end_line)
    query = {"path": hit.path, "lines": f"{lo}-{hi}"}
    if agent != DEFAULT_AGENT:
        query["agent"] = agent
    return f"/note?{urlencode(query)}#L{lo}-L{hi}"


def parse_range(text: str) -> tuple[int, int] | None:
    """`3-5` or `3` as (3, 5) or (3, 3); anything else None."""
    first, _, last = text.partition("-")
    try:
        lo = int(first)
        hi = int(last) if last else lo
    except ValueError:
        return None
    return (lo, hi) if 1 <= lo <= hi else None
