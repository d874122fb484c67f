"""Where dreaming keeps things inside a workspace, and which note paths are short-term memory.

The relative paths are OpenClaw's (so a workspace moves between the two tools unchanged), plus
two openmemd additions under memory/.dreams/ that OpenClaw ignores: the sweep state file and
the MEMORY.md backups (named without a `.md` suffix so no indexer ever picks them up).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

DREAMS_DIR = "memory/.dreams"
STORE_PATH = f"{DREAMS_DIR}/short-term-recall.json"
PHASE_SIGNALS_PATH = f"{DREAMS_DIR}/phase-signals.json"
LOCK_PATH = f"{DREAMS_DIR}/short-term-promotion.lock"
MEMORY_LOCK_PATH = f"{DREAMS_DIR}/memory-md.lock"  # flock around MEMORY.md writes (openmemd)
EVENTS_PATH = f"{DREAMS_DIR}/events.jsonl"
DAILY_INGESTION_PATH = f"{DREAMS_DIR}/daily-ingestion.json"
SWEEP_STATE_PATH = f"{DREAMS_DIR}/openmemd-sweep.json"
BACKUP_DIR = f"{DREAMS_DIR}/backups"
REPORTS_DIR = "memory/dreaming"
MEMORY_FILE = "MEMORY.md"
# OpenClaw uses an existing lower-case dreams.md, else creates DREAMS.md.
DREAMS_FILES = ("DREAMS.md", "dreams.md")

# A dated note anywhere under memory/ (subfolders included, OpenClaw's rule); slugged names like
# 2026-04-12-meeting.md are topic files, not short-term notes, in OpenClaw's baseline.
_SHORT_TERM_RE = re.compile(r"(?:^|/)memory/(?:[^/]+/)*(\d{4}-\d{2}-\d{2})\.md$")
_SESSION_CORPUS_RE = re.compile(
    r"(?:^|/)memory/\.dreams/session-corpus/(\d{4}-\d{2}-\d{2})\.(?:md|txt)$")
_BARE_DAY_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
_DREAMING_OUTPUT_RE = re.compile(r"(?:^|/)memory/dreaming/")
DAILY_NOTE_NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")


def normalize_memory_path(raw: str) -> str:
    """Forward slashes, no leading './' (OpenClaw's normalizeMemoryPath)."""
    path = raw.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def is_safe_relative(path: str) -> bool:
    """A workspace-relative path that cannot point outside the workspace."""
    if not path or path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return False
    return ".." not in PurePosixPath(path).parts


def is_dreaming_output(path: str) -> bool:
    """Phase reports: never recorded, never a candidate (the feedback loop of issue #67580)."""
    return bool(_DREAMING_OUTPUT_RE.search(normalize_memory_path(path)))


def is_short_term_path(path: str) -> bool:
    """Paths whose recalls are tracked: dated notes (and OpenClaw's session corpus)."""
    normalized = normalize_memory_path(path)
    if not normalized or is_dreaming_output(normalized):
        return False
    return bool(_SHORT_TERM_RE.search(normalized) or _SESSION_CORPUS_RE.search(normalized)
                or _BARE_DAY_RE.match(normalized))


def report_path(phase: str, day: str) -> str:
    return f"{REPORTS_DIR}/{phase}/{day}.md"
