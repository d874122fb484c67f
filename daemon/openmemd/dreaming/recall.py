"""Recall tracking: every search's hits in dated notes become evidence in the recall store.

`record_recalls` is the synchronous entry point (one locked read-modify-write of the store plus
one event-journal line). `RecallRecorder` is what a server uses: `submit` only enqueues, so a
search reply never waits for disk or for OpenClaw's lock; one background thread drains the
queue and writes each workspace's pending records in a single locked cycle.

A search's recall goes to the hit that answered it: its best-scored hit (all of them on a
tie), narrowed to the lines that answered (answer_lines.py). One deliberate difference from
OpenClaw, which records every returned hit: the other hits were shown beside the answer, not
used, and counting them promotes a question's neighbours with its answer -- each hit of a
question asked on three days passes the gates (three recalls, three days) together with the answer.
The best hit holds the evidence far more often than any other, and recording it alone makes most
promoted lines ones a question needed (docs/benchmarks.md, "Figures behind the code's choices").

Only hits with source "memory" on short-term paths (dated notes, subfolders included) are
kept; MEMORY.md, topic files and everything under memory/dreaming/ are ignored, as are
snippets shaped like dreaming output. When the best hit is one of those (the answer came
from MEMORY.md or a topic file), the search records nothing: no dated note answered it.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from openmemd.errors import WorkspaceError

from .answer_lines import best_lines
from .clock import as_utc, day_bucket, iso_z, resolve_timezone
from .concepts import derive_concept_tags
from .events import append_events, recall_recorded
from .layout import is_safe_relative, is_short_term_path, normalize_memory_path
from .lockfile import DEFAULT_TIMEOUT, store_lock
from .markdown_io import read_text
from .recall_hit import RecallHit
from .recall_store import (
    MAX_QUERY_HASHES,
    MAX_RECALL_DAYS,
    RecallEntry,
    RecallStore,
    clamp01,
    load_store,
    save_store,
)
from .snippet_filter import clean_hit_snippet, is_unpromotable, normalize_snippet, same_text

if TYPE_CHECKING:
    from .agent_corpus import CorpusMessage

log = logging.getLogger("openmemd.dreaming")

DAILY_QUERY_PREFIX = "__dreaming_daily__:"
SESSIONS_QUERY_PREFIX = "__dreaming_sessions__:"


def hash_query(query: str) -> str:
    """sha1 of the trimmed, lower-cased query, first 12 hex (OpenClaw's queryHash)."""
    return hashlib.sha1(query.strip().lower().encode("utf-8")).hexdigest()[:12]


def claim_hash(snippet: str) -> str:
    return hashlib.sha1(normalize_snippet(snippet).encode("utf-8")).hexdigest()[:12]


def entry_key(path: str, start_line: int, end_line: int, claim: str | None = None) -> str:
    base = f"memory:{normalize_memory_path(path)}:{start_line}:{end_line}"
    return f"{base}:{claim}" if claim else base


def as_hit(value: Any) -> RecallHit:
    """Accept a RecallHit or anything with the same attributes (e.g. the API's SearchResult)."""
    if isinstance(value, RecallHit):
        return value
    if isinstance(value, dict):
        get = value.get
        return RecallHit(str(get("path", "")), int(get("start_line", get("startLine", 0)) or 0),
                         int(get("end_line", get("endLine", 0)) or 0),
                         float(get("score", 0.0) or 0.0), str(get("snippet", "") or ""),
                         str(get("source", "memory") or ""), *_focus(get("focus")))
    return RecallHit(str(value.path), int(value.start_line), int(value.end_line),
                     float(value.score), str(value.snippet or ""),
                     str(getattr(value, "source", "memory") or ""),
                     int(getattr(value, "focus_start", 0) or 0),
                     int(getattr(value, "focus_end", 0) or 0))


def _focus(raw: Any) -> tuple[int, int]:
    """A reply's `focus` ({"startLine", "endLine"}), as (start, end); (0, 0) when absent."""
    if not isinstance(raw, dict):
        return 0, 0
    return int(raw.get("startLine", 0) or 0), int(raw.get("endLine", 0) or 0)


def answer_hits(workspace: Path, query: str, hits: Sequence[RecallHit]) -> list[RecallHit]:
    """Each hit narrowed to the lines that answered `query` (answer_lines.py): the search's
    own focus when it gave one inside the chunk, else the best lines by the query's terms.
    The lines are read from the note (a snippet is cut at 700 characters and may be centred
    elsewhere); a hit whose note cannot be read, or with no line to prefer, stays whole."""
    notes: dict[str, list[str] | None] = {}
    out = []
    for hit in hits:
        if hit.path not in notes:
            text = read_text(workspace, hit.path)
            notes[hit.path] = text.split("\n") if text is not None else None
        lines = notes[hit.path]
        if lines is None or hit.end_line > len(lines) or hit.start_line > hit.end_line:
            out.append(hit)
            continue
        span: tuple[int, int] | None = (hit.focus_start, hit.focus_end)
        if not (hit.start_line <= hit.focus_start <= hit.focus_end <= hit.end_line):
            chunk = "\n".join(lines[hit.start_line - 1:hit.end_line])
            span = best_lines(query, chunk, hit.start_line)
        if span is None or span == (hit.start_line, hit.end_line):
            out.append(hit)
            continue
        snippet = "\n".join(lines[span[0] - 1:span[1]])
        if is_unpromotable(normalize_snippet(snippet)):
            continue
        out.append(replace(hit, start_line=span[0], end_line=span[1], snippet=snippet,
                           focus_start=0, focus_end=0))
    return out


def best_hits(hits: Sequence[Any]) -> list[RecallHit]:
    """The hits that answered the search: its best-scored (every one of a tie), read as
    RecallHits. A hit without a readable, finite score cannot be compared and is not the
    answer."""
    scored = [hit for hit in _readable(hits) if math.isfinite(hit.score)]
    top = max((hit.score for hit in scored), default=None)
    return [hit for hit in scored if hit.score == top]


def eligible_hits(hits: Sequence[Any]) -> list[RecallHit]:
    """The hits that may be recorded: memory source, short-term note, promotable text."""
    kept = []
    for hit in _readable(hits):
        path = normalize_memory_path(hit.path)
        if hit.source != "memory" or not is_safe_relative(path) or not is_short_term_path(path):
            continue
        snippet = clean_hit_snippet(hit.snippet)
        if is_unpromotable(snippet):
            continue
        kept.append(replace(hit, path=path, snippet=snippet,
                            start_line=max(1, int(hit.start_line)),
                            end_line=max(1, int(hit.end_line))))
    return kept


def _readable(hits: Sequence[Any]) -> Iterator[RecallHit]:
    """`hits` read as RecallHits, leaving out each that cannot be read (one bad hit of a
    reply affects only itself)."""
    for raw in hits:
        try:
            yield as_hit(raw)
        except (AttributeError, TypeError, ValueError):
            continue


def apply_recalls(store: RecallStore, query: str, hits: Sequence[RecallHit], *, day: str,
                  now_iso: str, signal_type: str = "recall",
                  dedupe_by_query_per_day: bool = True) -> list[dict[str, Any]]:
    """Fold already-eligible `hits` into `store` (OpenClaw's recordShortTermRecalls).

    One deliberate difference: when a line range now holds different words than its entry
    was recorded for, the new words get their own (claim-hash) key instead of inheriting
    the old text's counts; OpenClaw would silently re-attribute them.

    With dedupe, a hit whose entry already has this query's hash and this day refreshes the
    entry (time, snippet, tags) without counting again. Returns the event journal's results.
    """
    query_hash = hash_query(query)
    results = []
    for hit in hits:
        snippet = normalize_snippet(hit.snippet)
        claim = claim_hash(snippet) if snippet else None
        claimed = entry_key(hit.path, hit.start_line, hit.end_line, claim) if claim else None
        key = entry_key(hit.path, hit.start_line, hit.end_line)
        base = store.entries.get(key)
        if claimed and (claimed in store.entries or (
                base is not None and base.snippet and not same_text(base.snippet, snippet))):
            # The range now holds other words than the ones this entry's evidence is for
            # (the note was edited): keep that evidence with its text, and track the new text
            # under its claim-hash key (OpenClaw's grounded-key form) instead of inheriting it.
            key = claimed
        else:
            claim = None
        old = store.entries.get(key)
        score = clamp01(hit.score) if math.isfinite(hit.score) else 0.0
        duplicate = (dedupe_by_query_per_day and old is not None
                     and query_hash in old.query_hashes and day in old.recall_days)
        add = 0 if duplicate else 1
        tags = derive_concept_tags(hit.path, snippet)
        store.entries[key] = RecallEntry(
            key=key, path=hit.path, start_line=hit.start_line, end_line=hit.end_line,
            snippet=snippet or (old.snippet if old else ""),
            recall_count=(old.recall_count if old else 0) + (add if signal_type == "recall" else 0),
            daily_count=(old.daily_count if old else 0) + (add if signal_type == "daily" else 0),
            grounded_count=old.grounded_count if old else 0,
            total_score=(old.total_score if old else 0.0) + (0.0 if duplicate else score),
            max_score=max(old.max_score if old else 0.0, 0.0 if duplicate else score),
            first_recalled_at=old.first_recalled_at if old and old.first_recalled_at else now_iso,
            last_recalled_at=now_iso,
            query_hashes=_merge_recent(old.query_hashes if old else (), query_hash,
                                       MAX_QUERY_HASHES),
            recall_days=_merge_recent(old.recall_days if old else (), day, MAX_RECALL_DAYS),
            concept_tags=tuple(tags) if tags else (old.concept_tags if old else ()),
            claim_hash=old.claim_hash if old and old.claim_hash else claim,
            promoted_at=old.promoted_at if old else None,
            extra=old.extra if old else (),
        )
        results.append({"path": hit.path, "startLine": hit.start_line, "endLine": hit.end_line,
                        "score": score})
    return results


def record_recalls(workspace: Path, query: str, hits: Sequence[RecallHit], *,
                   now: datetime | None = None, timezone: str = "",
                   lock_timeout: float = DEFAULT_TIMEOUT) -> int:
    """Record one search's hits now. Returns how many hits were recorded (refreshes included).

    Raises LockTimeoutError if OpenClaw holds the store lock past `lock_timeout`.
    """
    return _record_batch(Path(workspace), [_Pending(query, tuple(hits), as_utc(now))],
                         resolve_timezone(timezone), lock_timeout)


# The sources of other agents' sessions (`index.agent_sessions.AGENT_SOURCES`; dreaming does
# not import the index): their hits are recalled through the session corpus.
AGENT_HITS = frozenset({"claude-code", "codex"})
# (query, the agents' session hits that answered it) -> their messages for the corpus
SessionMessages: TypeAlias = Callable[[str, Sequence[RecallHit]], "list[CorpusMessage]"]


@dataclass(frozen=True)
class _Pending:
    query: str
    hits: tuple[Any, ...]
    at: datetime


def _record_batch(workspace: Path, batch: Sequence[_Pending], tz: tzinfo,
                  lock_timeout: float, sessions: SessionMessages | None = None) -> int:
    from .agent_corpus import place

    best = [(item, best_hits(item.hits)) for item in batch if item.query.strip()]
    # Another agent's session message that answered is recalled as its corpus line; what it
    # says is read (masked) now, before the lock.
    told = {id(item): sessions(item.query, [h for h in hits if h.source in AGENT_HITS])
            if sessions is not None else [] for item, hits in best}
    prepared = [(item, eligible_hits(hits)) for item, hits in best]
    prepared = [(item, hits) for item, hits in prepared if hits or told[id(item)]]
    if not prepared:
        return 0
    if not workspace.is_dir():  # never create a mistyped workspace as a side effect
        raise WorkspaceError(f"workspace {workspace} does not exist or is not a directory")
    # The lines that answered, read before the lock: the note is the user's, not the store's.
    prepared = [(item, answer_hits(workspace, item.query, hits)) for item, hits in prepared]
    prepared = [(item, hits) for item, hits in prepared if hits or told[id(item)]]
    if not prepared:
        return 0
    recorded = 0
    with store_lock(workspace, timeout=lock_timeout):
        latest = max(item.at for item, _ in prepared)
        loaded = load_store(workspace, latest, recover=True)
        store = loaded.store
        events = []
        for item, found in prepared:
            hits = [*found, *(line.hit for line in place(workspace, told[id(item)]))]
            now_iso = iso_z(item.at)
            results = apply_recalls(store, item.query.strip(), hits, now_iso=now_iso,
                                    day=day_bucket(item.at, tz))
            recorded += len(results)
            events.append(recall_recorded(item.query.strip(), results, now_iso))
        store.updated_at = iso_z(latest)
        save_store(workspace, store)
        append_events(workspace, events)
    return recorded


def _merge_recent(existing: Sequence[str], value: str, limit: int) -> tuple[str, ...]:
    """Distinct values in first-seen order plus `value`; the most recent `limit` kept."""
    merged = list(dict.fromkeys(v for v in existing if v))
    if value and value not in merged:
        merged.append(value)
    return tuple(merged[-limit:])


class RecallRecorder:
    """Records search hits on a background thread so searches never wait for the disk.

    The queue is bounded: when full, `submit` drops the record (and logs a warning) rather than
    block a search. `flush()` waits until everything submitted so far is written; `close()`
    flushes and stops the thread. Safe to call from many threads.
    """

    def __init__(self, timezone: str = "", *, max_pending: int = 1024,
                 lock_timeout: float = 300.0, sessions: SessionMessages | None = None) -> None:
        self._tz = resolve_timezone(timezone)
        self._sessions = sessions  # reads the agents' session messages a search cited
        self._max_pending = max(1, max_pending)
        self._lock_timeout = lock_timeout
        self._queue: deque[tuple[Path, _Pending]] = deque()
        self._cond = threading.Condition()
        self._unfinished = 0
        self._closed = False
        self._thread: threading.Thread | None = None
        self.dropped = 0  # records refused because the queue was full or the recorder closed
        self.failed = 0  # records lost to a write error (logged)

    def submit(self, workspace: Path, query: str, hits: Sequence[RecallHit], *,
               now: datetime | None = None) -> bool:
        """Queue one search's hits; False if the record was dropped. Never blocks on I/O."""
        item = (Path(workspace), _Pending(query, tuple(hits), as_utc(now)))
        with self._cond:
            if self._closed:
                self.dropped += 1
                log.warning("recall recorder is closed; dropped the hits of one search")
                return False
            if len(self._queue) >= self._max_pending:
                self.dropped += 1
                log.warning("recall queue full (%d pending); dropped the hits of one search",
                            len(self._queue))
                return False
            self._queue.append(item)
            self._unfinished += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="openmemd-recall",
                                                daemon=True)
                self._thread.start()
            self._cond.notify_all()
        return True

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every submitted record is written (or failed); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._unfinished == 0, timeout)

    def close(self, timeout: float | None = 10.0) -> bool:
        """Write what is queued, then stop the thread. Later submits are dropped."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        done = self.flush(timeout)
        if thread is not None:
            thread.join(timeout)
        return done

    def __enter__(self) -> RecallRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._closed)
                if not self._queue:
                    return  # closed and drained
                batch = list(self._queue)
                self._queue.clear()
            try:
                self._write(batch)
            finally:
                with self._cond:
                    self._unfinished -= len(batch)
                    self._cond.notify_all()

    def _write(self, batch: list[tuple[Path, _Pending]]) -> None:
        by_workspace: dict[Path, list[_Pending]] = {}
        for workspace, item in batch:
            by_workspace.setdefault(workspace, []).append(item)
        for workspace, items in by_workspace.items():
            try:
                _record_batch(workspace, items, self._tz, self._lock_timeout, self._sessions)
            except Exception as exc:  # a bad workspace must not kill the recorder
                self.failed += len(items)
                log.warning("could not record recalls in %s: %s", workspace, exc)
