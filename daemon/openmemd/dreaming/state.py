"""Dreaming's small state files under memory/.dreams/: phase signals, the daily-ingestion
checkpoint (both OpenClaw formats) and openmemd's own last-sweep record.

These files are advisory: an unreadable one is treated as empty (OpenClaw does the same), never
as an error, because each can be rebuilt by the next sweep.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .layout import DAILY_INGESTION_PATH, PHASE_SIGNALS_PATH, SWEEP_STATE_PATH
from .markdown_io import UnsafePathError, workspace_target, write_json

MAX_PHASE_HITS = 9999


@dataclass(frozen=True)
class PhaseSignal:
    """How often light / REM sleep surfaced an entry, and when last (boosts deep ranking)."""

    key: str
    light_hits: int = 0
    rem_hits: int = 0
    last_light_at: str | None = None
    last_rem_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"key": self.key, "lightHits": self.light_hits,
                                "remHits": self.rem_hits}
        if self.last_light_at:
            data["lastLightAt"] = self.last_light_at
        if self.last_rem_at:
            data["lastRemAt"] = self.last_rem_at
        return data


@dataclass(frozen=True)
class PhaseSignals:
    updated_at: str
    entries: Mapping[str, PhaseSignal]

    def get(self, key: str) -> PhaseSignal | None:
        return self.entries.get(key)

    def record(self, phase: str, keys: Iterable[str], now_iso: str,
               known_keys: Iterable[str]) -> PhaseSignals:
        """A new value with one more `phase` hit for each known key (OpenClaw caps at 9999)."""
        known = set(known_keys)
        entries = dict(self.entries)
        for key in dict.fromkeys(k.strip() for k in keys if k and k.strip()):
            if key not in known:
                continue
            current = entries.get(key, PhaseSignal(key))
            if phase == "light":
                current = replace(current, light_hits=min(MAX_PHASE_HITS, current.light_hits + 1),
                                  last_light_at=now_iso)
            else:
                current = replace(current, rem_hits=min(MAX_PHASE_HITS, current.rem_hits + 1),
                                  last_rem_at=now_iso)
            entries[key] = current
        return PhaseSignals(now_iso, entries)

    def pruned(self, known_keys: Iterable[str]) -> PhaseSignals:
        """Without entries for keys the recall store no longer has."""
        known = set(known_keys)
        return PhaseSignals(self.updated_at, {k: v for k, v in self.entries.items()
                                              if k in known and (v.light_hits or v.rem_hits)})

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "updatedAt": self.updated_at,
                "entries": {k: v.to_json() for k, v in self.entries.items()}}


def load_phase_signals(workspace: Path, now_iso: str) -> PhaseSignals:
    data = _read_json(workspace, PHASE_SIGNALS_PATH)
    raw_entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(raw_entries, dict):
        return PhaseSignals(now_iso, {})
    entries: dict[str, PhaseSignal] = {}
    for map_key, raw in raw_entries.items():
        if not isinstance(raw, dict):
            continue
        key: str = (raw["key"] if isinstance(raw.get("key"), str) and raw["key"].strip()
                    else map_key)
        light, rem = _non_negative_int(raw.get("lightHits")), _non_negative_int(raw.get("remHits"))
        if light == 0 and rem == 0:
            continue
        entries[key] = PhaseSignal(key, light, rem, _str_or_none(raw.get("lastLightAt")),
                                   _str_or_none(raw.get("lastRemAt")))
    updated: str = data["updatedAt"] if isinstance(data.get("updatedAt"), str) else now_iso
    return PhaseSignals(updated, entries)


def save_phase_signals(workspace: Path, signals: PhaseSignals) -> None:
    write_json(workspace, PHASE_SIGNALS_PATH, signals.to_json())


@dataclass(frozen=True)
class FileFingerprint:
    mtime_ms: int
    size: int


def load_daily_ingestion(workspace: Path) -> dict[str, FileFingerprint]:
    """`{"version":1,"files":{"memory/<f>":{"mtimeMs","size"}}}` as a dict."""
    data = _read_json(workspace, DAILY_INGESTION_PATH)
    files = data.get("files") if isinstance(data, dict) else None
    result: dict[str, FileFingerprint] = {}
    if not isinstance(files, dict):
        return result
    for key, raw in files.items():
        if not isinstance(raw, dict) or not isinstance(key, str) or not key.strip():
            continue
        try:
            mtime, size = float(raw["mtimeMs"]), float(raw["size"])
        except (KeyError, TypeError, ValueError):
            continue
        if not (math.isfinite(mtime) and math.isfinite(size)) or mtime < 0 or size < 0:
            continue
        result[key] = FileFingerprint(int(mtime), int(size))
    return result


def save_daily_ingestion(workspace: Path, files: Mapping[str, FileFingerprint]) -> None:
    write_json(workspace, DAILY_INGESTION_PATH,
               {"version": 1, "files": {k: {"mtimeMs": v.mtime_ms, "size": v.size}
                                        for k, v in files.items()}})


def load_sweep_state(workspace: Path) -> dict[str, Any] | None:
    data = _read_json(workspace, SWEEP_STATE_PATH)
    last = data.get("lastSweep") if isinstance(data, dict) else None
    return last if isinstance(last, dict) else None


def save_sweep_state(workspace: Path, summary: Mapping[str, Any]) -> None:
    write_json(workspace, SWEEP_STATE_PATH,
               {"version": 1, "lastSweep": dict(summary)})


def _read_json(workspace: Path, rel: str) -> dict[str, Any]:
    try:
        data = json.loads(workspace_target(workspace, rel).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnsafePathError):
        return {}
    return data if isinstance(data, dict) else {}


def _non_negative_int(value: Any) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0
    return int(number) if math.isfinite(number) and number >= 0 else 0


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
