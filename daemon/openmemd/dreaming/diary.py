"""DREAMS.md, the dream diary: one dated entry per sweep inside OpenClaw's diary markers.

OpenClaw asks an LLM for a whimsical paragraph; openmemd writes a plain, deterministic account
instead (what each phase found, what was promoted and why, with the score broken down), in the
same entry format so OpenClaw's diary view reads it:

    # Dream Diary

    <!-- openclaw:dreaming:diary:start -->
    ---

    *April 12, 2026 at 3:00 AM PDT*

    <text>
    <!-- openclaw:dreaming:diary:end -->

DREAMS.md is not indexed, so nothing here can be recalled and fed back into promotion.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, tzinfo
from pathlib import Path

from .clock import format_diary_date
from .layout import DREAMS_FILES
from .markdown_io import UnsafePathError, atomic_write_text, workspace_target
from .modes import PRIVATE_MODE
from .sweep_report import DeepSummary, LightSummary, PromotedEntry, RemSummary

log = logging.getLogger("openmemd.dreaming")

START_MARKER = "<!-- openclaw:dreaming:diary:start -->"
END_MARKER = "<!-- openclaw:dreaming:diary:end -->"
TITLE = "# Dream Diary"
_QUOTE_CHARS = 120
_MAX_THEMES = 5


def diary_rel_path(workspace: Path) -> str:
    """An existing DREAMS.md or dreams.md (OpenClaw's order), else DREAMS.md."""
    for name in DREAMS_FILES:
        if (workspace / name).exists() or (workspace / name).is_symlink():
            return name
    return DREAMS_FILES[0]


def check_writable(workspace: Path) -> Path:
    """The diary path; raises UnsafePathError for a symlinked DREAMS.md (nothing is written)."""
    rel = diary_rel_path(workspace)
    path = workspace / rel
    if path.is_symlink():
        raise UnsafePathError(f"refusing to write {rel}: it is a symlink (to {_link(path)}); "
                              "replace it with a regular file to keep a dream diary")
    return workspace_target(workspace, rel)


def _link(path: Path) -> str:
    try:
        return str(path.readlink())
    except OSError:  # pragma: no cover
        return "?"


def insert_entry(existing: str, entry: str) -> str:
    """Append an entry block before the diary's end marker, creating the section if needed."""
    if START_MARKER in existing and END_MARKER in existing:
        end = existing.rindex(END_MARKER)
        updated = existing[:end] + entry + "\n" + existing[end:]
    elif START_MARKER in existing:
        start = existing.index(START_MARKER) + len(START_MARKER)
        updated = existing[:start] + entry + "\n" + END_MARKER + "\n" + existing[start:]
    else:
        section = f"{TITLE}\n\n{START_MARKER}{entry}\n{END_MARKER}\n"
        updated = section if not existing.strip() else section + "\n" + existing
    return updated if updated.endswith("\n") else updated + "\n"


def entry_block(moment: datetime, tz: tzinfo, text: str) -> str:
    return f"\n---\n\n*{format_diary_date(moment, tz)}*\n\n{text.strip()}\n"


def write_entry(workspace: Path, moment: datetime, tz: tzinfo, text: str) -> str | None:
    """Append one entry atomically, keeping the file's mode (0600 for a new diary)."""
    path = check_writable(workspace)
    try:
        existing = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = ""
    except UnicodeDecodeError:
        # Rewriting it would damage the user's bytes; the sweep itself has succeeded.
        log.warning("%s is not UTF-8 text; the dream diary entry was not written", path)
        return None
    atomic_write_text(workspace, path.name, insert_entry(existing, entry_block(moment, tz, text)),
                      default_mode=PRIVATE_MODE)
    return path.name


def _quote(text: str) -> str:
    text = text.replace("*", "").strip()
    return f"“{text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS - 1].rstrip() + '…'}”"


def _why(p: PromotedEntry) -> str:
    c = p.components
    parts = ", ".join(f"{name} {value:.2f}" for name, value in c.items())
    return (f"score {p.score:.3f} ({parts}; phase boost +{p.phase_boost:.3f}); "
            f"{p.recalls} recall(s), {p.queries} distinct quer{'y' if p.queries == 1 else 'ies'}, "
            f"{p.days} day(s)")


def compose_text(light: LightSummary, rem: RemSummary, deep: DeepSummary,
                 messages: Sequence[str] = ()) -> str:
    """The entry's text: one paragraph per phase that ran, then notes."""
    paragraphs: list[str] = []
    if light.ran:
        line = (f"Light sleep read {light.ingested_files} changed note(s) "
                f"({light.ingested_snippets} snippet(s)) and staged {light.staged} "
                f"candidate(s) from recent recalls.")
        if light.examples:
            line += " Most recent: " + "; ".join(_quote(e) for e in light.examples) + "."
        paragraphs.append(line)
    if rem.ran:
        plural = "y" if rem.entries == 1 else "ies"
        line = f"REM sleep looked over {rem.entries} recent memor{plural}"
        if rem.themes:
            line += "; recurring themes: " + ", ".join(f"`{t}` ({s:.2f})"
                                                        for t, s in rem.themes[:_MAX_THEMES])
        else:
            line += "; no strong themes"
        if rem.truths:
            line += ". Possible lasting truths: " + "; ".join(_quote(t) for t in rem.truths)
        paragraphs.append(line + ".")
    if deep.ran:
        lines = [f"Deep sleep found {deep.eligible} candidate(s) passing every gate and "
                 f"promoted {len(deep.promoted)} into MEMORY.md"
                 + (":" if deep.promoted else ".")]
        for p in deep.promoted:
            lines.append(f"- {_quote(p.text)} from {p.source}: {_why(p)}.")
        for s in deep.skipped:
            lines.append(f"- Not promoted: {s.path}:{s.start_line}-{s.end_line} "
                         f"(score {s.score:.3f}): {s.reason}.")
        if deep.reconciled:
            were = "y was" if deep.reconciled == 1 else "ies were"
            lines.append(f"- {deep.reconciled} entr{were} already in MEMORY.md and were marked "
                         "promoted.")
        if deep.size_capped:
            # Which cap and the sizes are in the notes below (the deep phase's message).
            lines.append(f"- Stopped at the MEMORY.md size cap: {deep.left_for_later} "
                         "candidate(s) wait for room.")
        paragraphs.append("\n".join(lines))
    notes = [m for m in messages if m]
    if notes:
        paragraphs.append("Notes: " + "; ".join(notes) + ".")
    if not paragraphs:
        paragraphs.append("A quiet night: no phase ran.")
    return "\n\n".join(paragraphs)


__all__ = ["END_MARKER", "START_MARKER", "UnsafePathError", "check_writable", "compose_text",
           "diary_rel_path", "entry_block", "insert_entry", "write_entry"]
