"""What the daemon answers, as records both ends read: the dispatcher and the local handler
build them, a `Client` reads the JSON back into the same record (`read_reply`), and the
command line and MCP read fields. They turn into JSON only where a reply is encoded, printed
with `--json` or returned by an MCP tool.

The JSON is the one the replies have always had (camelCase keys; an optional key absent rather
than null where it always was, null where it always was): scripts and models read it. `status`
answers a `DaemonStatus` (protocol/status.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from openmemd.protocol.records import JsonRecord, field, omitted_if_empty, omitted_if_none
from openmemd.protocol.requests import (
    AddRequest,
    ContextRequest,
    DemoteRequest,
    DreamRequest,
    DreamsRequest,
    GetRequest,
    MemoryRequest,
    PingRequest,
    ProtocolError,
    Request,
    SearchRequest,
    StatusRequest,
    SyncRequest,
    UndoRequest,
)
from openmemd.protocol.status import DaemonStatus

# -- ping -----------------------------------------------------------------------------------


class ServedAgent(JsonRecord):
    """What a daemon's ping says of one agent it serves: enough to tell whether it serves the
    workspace and index a command means (openmemd/discovery.py)."""

    workspace: str | None = None
    ok: bool | None = None  # False: it owns the index but could not open it
    index: str = ""  # `config.index_location`; "" from a daemon too old to say


class PingReply(JsonRecord):
    """Is a daemon (or this process) there, and which version."""

    pong: bool
    version: str
    pid: int


class DashboardLink(JsonRecord):
    """Where a daemon serves its web dashboard, and the file holding the token its pages ask
    for (`openmemd dashboard` reads it: the same user's, 0600)."""

    url: str
    token_file: str


class DaemonPingReply(PingReply):
    """A daemon's ping: also what it serves, where it hosts MCP sessions and the config file it
    checked (cheap: no disk access)."""

    agents: Mapping[str, ServedAgent] = field(default_factory=dict)
    mcp: str | None = None  # the unix socket of its MCP sessions (server/mcp_host.py)
    # `config.locate.config_signature` of the config file it loaded, as it was then
    config: tuple[int, ...] | None = None
    dashboard: DashboardLink | None = omitted_if_none(default=None)  # None: off, or not bound


# -- search ---------------------------------------------------------------------------------


class Lines(JsonRecord):
    """A range of lines (a hit's focus: the lines that answer best)."""

    start_line: int
    end_line: int


class Explain(JsonRecord):
    """How a hit's score was made (`search.candidate.to_hit`), sent when asked for."""

    mode: str
    legs: tuple[str, ...]
    vector_score: float | None
    vector_cosine: float | None
    keyword_score: float | None
    bm25_rank: float | None
    coverage: float | None
    gate_score: float | None  # what the min score is compared with
    decay: float | None
    age_days: float | None
    mmr_position: int | None
    relaxed: bool
    keyword_evidence: float | None
    evidence: float | None
    query_evidence: float | None
    score: float
    date: Mapping[str, Any] | None = omitted_if_none(default=None)  # what a date query did


class Hit(JsonRecord):
    """One search result, OpenClaw's shape: the chunk's lines, its score (0..1), the snippet
    and where to cite it."""

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: str
    focus: Lines | None = omitted_if_none(default=None)
    citation: str = omitted_if_empty(default="")  # empty when citations are off
    namespace: str = omitted_if_empty(default="")  # a hit of another namespace (PostgreSQL)
    explain: Explain | None = omitted_if_none(default=None)


class Nearest(JsonRecord):
    """The nearest miss of a search that found nothing: what a lower min score shows first."""

    score: float
    path: str
    start_line: int
    end_line: int
    citation: str


class DateRange(JsonRecord):
    """One range of dates a query names."""

    start: str = field(key="from")
    end: str = field(key="to")
    text: str = ""


class NearestNotes(JsonRecord):
    """For dates that hold no note: the dated notes nearest them."""

    before: str | None
    after: str | None
    searched_first: bool = omitted_if_empty(default=False)  # those within a week were searched


class DatesSaid(JsonRecord):
    """The dates a query was understood to name (`DateQuery.to_meta`)."""

    start: str = field(key="from")
    end: str = field(key="to")
    text: str = ""
    about: str = "topic"  # "date": the question is about the date itself
    ranges: tuple[DateRange, ...] = omitted_if_empty(default=())  # when it named several
    nearest_notes: NearestNotes | None = omitted_if_none(default=None)
    # where reading stopped, in a query naming more dates than are read (`dates.forms`)
    note: str | None = omitted_if_none(default=None)


class SearchReply(JsonRecord):
    """A search's results and what answered them: provider, model, mode (and why it was
    keyword only), the citations mode, the dates understood, and when nothing was found the
    nearest miss and the chunks still waiting for a vector."""

    results: tuple[Hit, ...]
    provider: str
    model: str
    mode: str
    degraded: str = omitted_if_empty(default="")
    citations: str = "auto"
    dates: DatesSaid | None = omitted_if_none(default=None)
    nearest: Nearest | None = omitted_if_none(default=None)
    pending_vectors: int = omitted_if_empty(default=0)
    took_ms: float = 0.0
    indexing: bool = omitted_if_empty(default=False)  # still embedding in this process


# -- get, add -------------------------------------------------------------------------------


class GetReply(JsonRecord):
    """Lines of a file (or of a hit of another namespace, read from the stored index)."""

    path: str
    text: str
    from_line: int = field(key="from")
    lines: int = 0
    total_lines: int = 0
    line_numbers: tuple[int, ...] | None = omitted_if_none(default=None)  # a transcript's
    namespace: str | None = omitted_if_none(default=None)


class AddReply(JsonRecord):
    """The lines a note was written to, and whether it is indexed yet."""

    path: str
    start_line: int
    end_line: int
    citation: str
    indexed: bool | None = omitted_if_none(default=None)
    index_error: str | None = omitted_if_none(default=None)


# -- sync -----------------------------------------------------------------------------------


class PathReason(JsonRecord):
    path: str
    reason: str


class SyncSummary(JsonRecord):
    """What a sync did (`index.report.SyncReport`)."""

    scanned: int = 0
    indexed: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks: int = 0
    vectors_embedded: int = 0
    vectors_from_cache: int = 0
    vectors_pending: int = 0
    reindexed: bool = False
    seconds: float = 0.0
    skipped: tuple[PathReason, ...] = ()
    warnings: tuple[PathReason, ...] = ()
    # symlinked notes and folders the scan did not follow, and why (sent only when some are)
    not_followed: tuple[PathReason, ...] = omitted_if_empty(default=())


class SyncReply(JsonRecord):
    """A sync's report, or (not waited for) that it is queued."""

    report: SyncSummary | None = omitted_if_none(default=None)
    queued: bool = omitted_if_empty(default=False)
    queue_depth: int | None = omitted_if_none(default=None)


# -- dream ----------------------------------------------------------------------------------


class LightReport(JsonRecord):
    ran: bool = False
    ingested_files: int = 0
    ingested_snippets: int = 0
    staged: int = 0
    report_path: str | None = None


class Theme(JsonRecord):
    tag: str
    strength: float


class RemReport(JsonRecord):
    ran: bool = False
    ingested_snippets: int = 0
    entries: int = 0
    themes: tuple[Theme, ...] = ()
    truths: int = 0
    report_path: str | None = None


class SkippedEntry(JsonRecord):
    key: str
    path: str
    start_line: int
    end_line: int
    score: float
    reason: str


class DeepReport(JsonRecord):
    ran: bool = False
    eligible: int = 0
    promoted: int = 0
    reconciled: int = 0
    skipped: tuple[SkippedEntry, ...] = ()
    size_capped: bool = False
    left_for_later: int = 0
    memory_bytes: int = 0
    max_memory_bytes: int = 0
    report_path: str | None = None
    backup_path: str | None = None


class Promoted(JsonRecord):
    """An entry appended to MEMORY.md, with the evidence for it."""

    key: str
    path: str
    start_line: int
    end_line: int
    text: str
    score: float
    components: Mapping[str, float]
    phase_boost: float
    recalls: int
    daily_signals: int
    avg_score: float
    queries: int
    days: int
    moved: bool = False


class DreamResult(JsonRecord):
    """What a sweep did (`dreaming.sweep_report.SweepResult`)."""

    workspace: str
    day: str
    timezone: str
    started_at: str
    dry_run: bool
    phases: tuple[str, ...]
    light: LightReport
    rem: RemReport
    deep: DeepReport
    promoted: tuple[Promoted, ...] = ()
    report_paths: tuple[str, ...] = ()
    diary_path: str | None = None
    messages: tuple[str, ...] = ()


class DreamReply(JsonRecord):
    result: DreamResult


# -- context --------------------------------------------------------------------------------


class Truncation(JsonRecord):
    omitted_chars: int
    omitted_bytes: int
    by: tuple[str, ...]


class ContextFile(JsonRecord):
    path: str
    kind: str
    day: str | None
    size: int = field(key="bytes")
    included_chars: int = 0
    included_bytes: int = 0
    truncated: Truncation | None = None


class ContextBudgets(JsonRecord):
    bootstrap_max_chars: int
    bootstrap_total_max_chars: int
    daily_max_file_bytes: int
    daily_total_max_chars: int


class UsedChars(JsonRecord):
    bootstrap_chars: int = 0
    daily_chars: int = 0


class ContextReply(JsonRecord):
    """The session's startup context (`openmemd.context`): `text` is the block for a prompt."""

    agent: str
    workspace: str
    today: str
    timezone: str
    days: tuple[str, ...]
    files: tuple[ContextFile, ...]
    skipped: tuple[PathReason, ...]
    truncated: bool
    budgets: ContextBudgets
    used: UsedChars
    text: str


# -- memory, demote, undo, dreams -----------------------------------------------------------


class MemoryEntry(JsonRecord):
    """One line of MEMORY.md that says something; a promoted entry also says when, from which
    note lines, its score and the searches that recalled it (`dreaming.memory_view`)."""

    kind: str  # "heading" | "note" | "promoted"
    line: int
    text: str
    key: str | None = omitted_if_none(default=None)
    digest: str | None = omitted_if_none(default=None)  # what `demote` echoes
    section: str | None = omitted_if_none(default=None)
    source: str | None = omitted_if_none(default=None)
    score: float | None = omitted_if_none(default=None)
    recalls: int | None = omitted_if_none(default=None)
    avg_score: float | None = omitted_if_none(default=None)
    promoted_at: str | None = omitted_if_none(default=None)
    queries: tuple[str, ...] = omitted_if_empty(default=())
    recall_days: tuple[str, ...] = omitted_if_empty(default=())
    unique_queries: int | None = omitted_if_none(default=None)


class MemoryReply(JsonRecord):
    path: str
    exists: bool
    chars: int
    size: int = field(key="bytes")
    budget_chars: int = 0  # context.bootstrap_max_chars
    entries: tuple[MemoryEntry, ...] = ()


class DemoteReply(JsonRecord):
    """Where a demoted entry went (or, for undo, came back from)."""

    key: str
    archive: str
    memory_chars: int
    exact: bool = True  # undo: MEMORY.md is byte for byte what it was before the demotion


class DreamsFileText(JsonRecord):
    path: str
    phase: str | None
    day: str | None
    text: str
    truncated: bool = False


class DreamsReply(JsonRecord):
    diary: DreamsFileText | None
    reports: tuple[DreamsFileText, ...]
    tonight: DreamResult  # a dry run: what a sweep now would do


# -- the table ------------------------------------------------------------------------------

Reply = (PingReply | DaemonStatus | SearchReply | GetReply | SyncReply | DreamReply | AddReply
         | ContextReply | MemoryReply | DemoteReply | DreamsReply)

# Each request's reply, as a client reads it (a ping from a daemon says what it serves).
REPLIES: dict[type[Request], type[Reply]] = {
    PingRequest: DaemonPingReply, StatusRequest: DaemonStatus, SearchRequest: SearchReply,
    GetRequest: GetReply, SyncRequest: SyncReply, DreamRequest: DreamReply,
    AddRequest: AddReply, ContextRequest: ContextReply, MemoryRequest: MemoryReply,
    DemoteRequest: DemoteReply, UndoRequest: DemoteReply, DreamsRequest: DreamsReply}

R = TypeVar("R", bound=JsonRecord)


def read_reply(request: Request, fields: Mapping[str, Any]) -> Reply:
    """The reply's JSON (without "ok" and "id") as the record of `request`'s reply."""
    return REPLIES[type(request)].from_json(fields)


def expect(reply: Reply, kind: type[R]) -> R:
    """`reply` as the record its request answers with (a handler answers each request with
    its own; anything else is a bug, reported as one)."""
    if not isinstance(reply, kind):
        raise ProtocolError("internal", f"expected a {kind.__name__} reply, got "
                                        f"{type(reply).__name__}")
    return reply
