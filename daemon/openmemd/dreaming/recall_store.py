"""The short-term recall store, `memory/.dreams/short-term-recall.json`, in OpenClaw's format.

    {"version": 1, "updatedAt": ISO, "entries": {"memory:<path>:<start>:<end>": {...}}}

Reading follows OpenClaw's normaliser (so a store OpenClaw wrote is used as is) with one
difference: fields this code does not know, at the top level or in an entry, are kept and
written back, so a newer OpenClaw's additions survive a round trip through openmemd. A store
that is not JSON (or not an object) is moved aside to `short-term-recall.json.corrupt-<ts>`
and a fresh one started, with a warning; a store of another version is left alone.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from openmemd.errors import OpenmemdError

from .clock import as_utc, iso_z, normalize_day
from .concepts import MAX_CONCEPT_TAGS, derive_concept_tags
from .layout import STORE_PATH, normalize_memory_path
from .markdown_io import workspace_target, write_json
from .snippet_filter import normalize_snippet

log = logging.getLogger("openmemd.dreaming")

STORE_VERSION = 1
MAX_QUERY_HASHES = 32
MAX_RECALL_DAYS = 16

_ENTRY_FIELDS = ("key", "path", "startLine", "endLine", "source", "snippet", "recallCount",
                 "dailyCount", "groundedCount", "totalScore", "maxScore", "firstRecalledAt",
                 "lastRecalledAt", "queryHashes", "recallDays", "conceptTags", "claimHash",
                 "promotedAt")


class StoreVersionError(OpenmemdError):
    """The recall store has a version this code does not understand; it is left untouched."""

    code = "unavailable"


@dataclass(frozen=True)
class RecallEntry:
    """One remembered snippet of a dated note and the evidence that it keeps coming back."""

    key: str
    path: str
    start_line: int
    end_line: int
    snippet: str = ""
    source: str = "memory"
    recall_count: int = 0  # organic recalls: search hits
    daily_count: int = 0  # dreaming's own ingestion of recent notes
    grounded_count: int = 0  # OpenClaw's grounded backfill (a user-run CLI)
    total_score: float = 0.0
    max_score: float = 0.0
    first_recalled_at: str = ""
    last_recalled_at: str = ""
    query_hashes: tuple[str, ...] = ()
    recall_days: tuple[str, ...] = ()
    concept_tags: tuple[str, ...] = ()
    claim_hash: str | None = None
    promoted_at: str | None = None
    extra: tuple[tuple[str, Any], ...] = field(default=(), compare=False)

    @property
    def signal_count(self) -> int:
        return self.recall_count + self.daily_count + self.grounded_count

    @property
    def avg_score(self) -> float:
        """Mean score over every signal, clamped to 0..1 (OpenClaw's `avg`)."""
        if self.signal_count <= 0:
            return 0.0
        return clamp01(self.total_score / self.signal_count)

    @property
    def evidence(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "key": self.key, "path": self.path, "startLine": self.start_line,
            "endLine": self.end_line, "source": self.source, "snippet": self.snippet,
            "recallCount": self.recall_count, "dailyCount": self.daily_count,
            "groundedCount": self.grounded_count, "totalScore": _js_number(self.total_score),
            "maxScore": _js_number(self.max_score), "firstRecalledAt": self.first_recalled_at,
            "lastRecalledAt": self.last_recalled_at, "queryHashes": list(self.query_hashes),
            "recallDays": list(self.recall_days), "conceptTags": list(self.concept_tags),
        }
        if self.claim_hash:
            data["claimHash"] = self.claim_hash
        if self.promoted_at:
            data["promotedAt"] = self.promoted_at
        for name, value in self.extra:
            data.setdefault(name, value)
        return data

    @classmethod
    def from_json(cls, key: str, raw: Any, now_iso: str) -> RecallEntry | None:
        """OpenClaw's per-entry normalisation; None for an entry it would drop."""
        if not isinstance(raw, Mapping):
            return None
        path = normalize_memory_path(raw["path"]) if isinstance(raw.get("path"), str) else ""
        start, end = _as_int(raw.get("startLine")), _as_int(raw.get("endLine"))
        if not path or start is None or end is None or raw.get("source") != "memory":
            return None
        snippet = normalize_snippet(raw["snippet"]) if isinstance(raw.get("snippet"), str) else ""
        tags_raw = raw.get("conceptTags")
        if isinstance(tags_raw, list):
            tags = _distinct([t.lower() if isinstance(t, str) else t for t in tags_raw],
                             MAX_CONCEPT_TAGS, keep="first")
        else:
            tags = tuple(derive_concept_tags(path, snippet))
        days_raw = raw.get("recallDays")
        days = [d for d in (normalize_day(str(v)) for v in days_raw) if d] \
            if isinstance(days_raw, list) else []
        hashes_raw = raw.get("queryHashes")
        claim = raw.get("claimHash")
        return cls(
            key=key or _base_key(path, start, end),
            path=path, start_line=start, end_line=end, snippet=snippet,
            recall_count=_count(raw.get("recallCount")),
            daily_count=_count(raw.get("dailyCount")),
            grounded_count=_count(raw.get("groundedCount")),
            total_score=max(0.0, _as_float(raw.get("totalScore"))),
            max_score=clamp01(_as_float(raw.get("maxScore"))),
            first_recalled_at=raw["firstRecalledAt"]
            if isinstance(raw.get("firstRecalledAt"), str) else now_iso,
            last_recalled_at=raw["lastRecalledAt"]
            if isinstance(raw.get("lastRecalledAt"), str) else now_iso,
            query_hashes=_distinct(hashes_raw, MAX_QUERY_HASHES, keep="last")
            if isinstance(hashes_raw, list) else (),
            recall_days=tuple(days[-MAX_RECALL_DAYS:]),
            concept_tags=tags,
            claim_hash=claim.strip() if isinstance(claim, str) and claim.strip() else None,
            promoted_at=raw["promotedAt"] if isinstance(raw.get("promotedAt"), str) else None,
            extra=tuple((k, v) for k, v in raw.items() if k not in _ENTRY_FIELDS),
        )


class RecallStore:
    """The loaded store: a working set that one locked read-modify-write cycle mutates."""

    def __init__(self, updated_at: str, entries: dict[str, RecallEntry] | None = None,
                 extra: Mapping[str, Any] | None = None) -> None:
        self.updated_at = updated_at
        self.entries: dict[str, RecallEntry] = dict(entries or {})
        self.extra: dict[str, Any] = dict(extra or {})
        self.dropped = 0  # entries OpenClaw's normaliser would also drop

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"version": STORE_VERSION, "updatedAt": self.updated_at,
                                "entries": {k: e.to_json() for k, e in self.entries.items()}}
        for name, value in self.extra.items():
            data.setdefault(name, value)
        return data

    def copy(self) -> RecallStore:
        clone = RecallStore(self.updated_at, self.entries, self.extra)
        clone.dropped = self.dropped
        return clone


@dataclass(frozen=True)
class LoadedStore:
    store: RecallStore
    messages: tuple[str, ...] = ()
    moved_aside: str | None = None  # workspace-relative path of a corrupt store we moved


def load_store(workspace: Path, now: datetime, *, recover: bool) -> LoadedStore:
    """Read the store. A corrupt one is moved aside when `recover`, else just ignored."""
    now_iso = iso_z(now)
    path = workspace_target(workspace, STORE_PATH)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return LoadedStore(RecallStore(now_iso))
    except UnicodeDecodeError:
        text = None
    problem = None
    data: Any = None
    if text is not None and not text.strip():
        return LoadedStore(RecallStore(now_iso))  # empty file: OpenClaw treats it as empty
    if text is None:
        problem = "it is not UTF-8"
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            problem = f"it is not valid JSON ({exc.msg} at line {exc.lineno})"
        except ValueError as exc:  # valid syntax, but e.g. a number too long to convert
            problem = f"it is not valid JSON ({exc})"
    if problem is None and not isinstance(data, dict):
        problem = "it is not a JSON object"
    if problem is None and "entries" in data and not isinstance(data["entries"], dict):
        problem = "its 'entries' is not an object"
    if problem is not None:
        return _corrupt(workspace, path, problem, now, now_iso, recover)
    version = data.get("version", STORE_VERSION)
    if version != STORE_VERSION:
        raise StoreVersionError(f"{STORE_PATH} has version {version!r}; openmemd understands "
                                f"version {STORE_VERSION} only and will not modify it")
    store = RecallStore(data["updatedAt"] if isinstance(data.get("updatedAt"), str) else now_iso,
                        extra={k: v for k, v in data.items()
                               if k not in ("version", "updatedAt", "entries")})
    for key, raw in (data.get("entries") or {}).items():
        entry = RecallEntry.from_json(key, raw, now_iso)
        if entry is None:
            store.dropped += 1
            continue
        store.entries[entry.key] = entry
    messages: tuple[str, ...] = ()
    if store.dropped:
        messages = (f"ignored {store.dropped} malformed recall store entr"
                    f"{'y' if store.dropped == 1 else 'ies'}",)
    return LoadedStore(store, messages)


def save_store(workspace: Path, store: RecallStore) -> None:
    write_json(workspace, STORE_PATH, store.to_json())


def _corrupt(workspace: Path, path: Path, problem: str, now: datetime, now_iso: str,
             recover: bool) -> LoadedStore:
    if not recover:
        return LoadedStore(RecallStore(now_iso),
                           (f"{STORE_PATH} is unreadable ({problem}); treated as empty",))
    stamp = as_utc(now).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    counter = 1
    while target.exists():
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{counter}")
        counter += 1
    os.replace(path, target)
    rel = target.relative_to(workspace).as_posix()
    message = (f"{STORE_PATH} was unreadable ({problem}); moved it to {rel} and started a "
               "new recall store")
    log.warning(message)
    return LoadedStore(RecallStore(now_iso), (message,), rel)


# -- small helpers ------------------------------------------------------------------------------

def clamp01(value: float) -> float:
    if not isinstance(value, (int, float)) or math.isnan(value):
        return 0.0
    return max(0.0, min(1.0, float(value)))


def _base_key(path: str, start: int, end: int) -> str:
    return f"memory:{path}:{start}:{end}"


def _js_number(value: float) -> float | int:
    # JSON.stringify writes 2 for 2.0; keep the files byte-comparable with OpenClaw's.
    return int(value) if float(value).is_integer() else value


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return int(number) if number.is_integer() else None
    return None


def _as_float(value: Any) -> float:
    if isinstance(value, bool):
        return 0.0
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(number) or math.isinf(number) else number


def _count(value: Any) -> int:
    return max(0, math.floor(_as_float(value)))


def _distinct(values: Sequence[object], limit: int, *, keep: str) -> tuple[str, ...]:
    seen: list[str] = []
    for value in values:
        if isinstance(value, str) and value.strip() and value.strip() not in seen:
            seen.append(value.strip())
    return tuple(seen[:limit] if keep == "first" else seen[-limit:])
