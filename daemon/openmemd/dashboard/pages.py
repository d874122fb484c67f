"""The dashboard's views: each asks the daemon's `Handler` (the one the socket and MCP use)
with a typed request and returns its template and what the template shows. No second way
into the index: a page reads only what a request answers."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from openmemd.config.locate import DEFAULT_AGENT
from openmemd.protocol.handler import Handler
from openmemd.protocol.replies import (
    DemoteReply,
    DreamsReply,
    GetReply,
    Hit,
    MemoryReply,
    SearchReply,
    expect,
)
from openmemd.protocol.requests import (
    DemoteRequest,
    DreamsRequest,
    GetRequest,
    MemoryRequest,
    SearchRequest,
    StatusRequest,
    UndoRequest,
)
from openmemd.protocol.status import DaemonStatus

MEMORY_BUDGET_CHARS = 20_000  # OpenClaw's bootstrap budget for MEMORY.md (bootstrapMaxChars)
MAX_QUERY_CHARS = 2_000
MAX_MESSAGE_CHARS = 300  # a flash message in the URL, shown as one line


@dataclass(frozen=True)
class Page:
    template: str
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Line:
    number: int
    text: str
    marked: bool


REFRESH_SECONDS = 2  # the Status page reloads itself this often while vectors are embedded


def status_page(handler: Handler, params: Mapping[str, str]) -> Page:
    status = expect(handler(StatusRequest()), DaemonStatus)
    return Page("status.html", {"status": status, "title": "Status",
                                "refresh": REFRESH_SECONDS if filling(status) else None})


def filling(status: DaemonStatus) -> bool:
    """Long work runs, or vectors wait: the page follows it live (a reload, no script)."""
    return any((a.indexer is not None and a.indexer.progress)
               or (a.index is not None and a.index.pending_vectors > 0) for a in status.agents)


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
    """MEMORY.md entry by entry against its budget; each promoted entry with why it is there
    and a demote form; after a demotion (`?done=demoted&key=…`) an undo form for it."""
    agent = params.get("agent") or DEFAULT_AGENT
    reply = expect(handler(MemoryRequest(agent=agent)), MemoryReply)
    budget = reply.budget_chars or MEMORY_BUDGET_CHARS
    done = params.get("done", "")
    return Page("memory.html", {
        "title": "Memory", "reply": reply, "agent": agent, "chars": reply.chars,
        "budget": budget, "percent": min(100, round(100 * reply.chars / budget)),
        "entries": [(entry, source_link(entry.source, agent)) for entry in reply.entries],
        "done": done if done in DONE else "", "key": params.get("key", ""),
        "error": params.get("error", "")[:MAX_MESSAGE_CHARS]})


def dreams_page(handler: Handler, params: Mapping[str, str]) -> Page:
    """DREAMS.md and the phase reports, newest first, and a dry run of tonight's sweep."""
    agent = params.get("agent") or DEFAULT_AGENT
    reply = expect(handler(DreamsRequest(agent=agent)), DreamsReply)
    return Page("dreams.html", {"title": "Dreams", "reply": reply, "agent": agent,
                                "tonight": reply.tonight})


def demote_action(handler: Handler, form: Mapping[str, str]) -> str:
    """Demote the form's entry (refused if it changed since the page listed it); where the
    browser goes next."""
    agent = form.get("agent") or DEFAULT_AGENT
    key = form.get("key", "")
    moved = expect(handler(DemoteRequest(key, agent=agent, digest=form.get("digest") or None)),
                   DemoteReply)
    return memory_url(agent, done="demoted", key=moved.key)


def undo_action(handler: Handler, form: Mapping[str, str]) -> str:
    agent = form.get("agent") or DEFAULT_AGENT
    moved = expect(handler(UndoRequest(form.get("key", ""), agent=agent)), DemoteReply)
    return memory_url(agent, done="undone", key=moved.key)


def memory_url(agent: str = DEFAULT_AGENT, **query: str) -> str:
    """`/memory` with a one-line flash (`done`, `key` or `error`) in its query."""
    if agent != DEFAULT_AGENT:
        query["agent"] = agent
    return "/memory" + (f"?{urlencode(query)}" if query else "")


PAGES = {"/": status_page, "/search": search_page, "/note": note_page,
         "/memory": memory_page, "/dreams": dreams_page}
Action = Callable[[Handler, Mapping[str, str]], str]
# The writes: a POST's form to the page the browser is sent back to (303).
ACTIONS: dict[str, Action] = {"/memory/demote": demote_action, "/memory/undo": undo_action}
DONE = ("demoted", "undone")


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


def source_link(source: str | None, agent: str = DEFAULT_AGENT) -> str | None:
    """A promoted entry's `path#L3-L5` (or `path#L3`) as its note link; None without one."""
    if not source:
        return None
    path, _, fragment = source.partition("#")
    cited = parse_range(fragment.replace("L", "")) if fragment else None
    query = {"path": path}
    if cited is not None:
        query["lines"] = f"{cited[0]}-{cited[1]}"
    if agent != DEFAULT_AGENT:
        query["agent"] = agent
    anchor = f"#L{cited[0]}-L{cited[1]}" if cited is not None else ""
    return f"/note?{urlencode(query)}{anchor}"


def parse_range(text: str) -> tuple[int, int] | None:
    """`3-5` or `3` as (3, 5) or (3, 3); anything else None."""
    first, _, last = text.partition("-")
    try:
        lo = int(first)
        hi = int(last) if last else lo
    except ValueError:
        return None
    return (lo, hi) if 1 <= lo <= hi else None
