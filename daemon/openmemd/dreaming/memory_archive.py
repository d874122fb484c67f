"""Keeping MEMORY.md within its bootstrap budget: promoted entries move to an archive note.

MEMORY.md is loaded whole into every session's startup context (up to the bootstrap budget,
`context.bootstrap_max_chars`); past it the tail is cut and the newest promotions are the ones
lost. So when a promotion would push MEMORY.md over, the least recalled *promoted* entries
move out to `memory/archive/MEMORY-<day>.md`: a topic file under memory/, so search still
finds them (not a dated note, so it is neither a recall candidate nor a day of the startup
context; not under memory/dreaming/, which search leaves out).

Only an entry promotion wrote is ever moved, recognised by its two lines: the marker
`<!-- openclaw-memory-promotion:<key> -->` alone on a line, then a bullet ending in the
`[score=… recalls=N … source=…]` annotation. Anything else in the file is the user's and
stays, as does a section heading that still has anything under it. The marker moves with
the entry, so the archive says where each line came from.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from openmemd.text.promotion import SECTION, entry_recalls, marker_key

from .markdown_io import atomic_write_text, read_text
from .memory_write import MemoryFileUnreadableError

ARCHIVE_DIR = "memory/archive"


@dataclass(frozen=True)
class PromotedBlock:
    key: str
    recalls: int
    line: int  # 0-based index of the marker line in MEMORY.md
    text: str  # the marker line and the bullet, newline-joined


def archive_path(day: str) -> str:
    return f"{ARCHIVE_DIR}/MEMORY-{day}.md"


def promoted_blocks(memory_text: str) -> list[PromotedBlock]:
    lines = memory_text.split("\n")
    out = []
    for i, line in enumerate(lines[:-1]):
        key = marker_key(line)
        recalls = entry_recalls(lines[i + 1]) if key else None
        if key and recalls is not None:
            out.append(PromotedBlock(key, recalls, i, f"{line}\n{lines[i + 1]}"))
    return out


def remove_blocks(memory_text: str, keys: Collection[str]) -> str:
    """MEMORY.md without the promoted entries of `keys`, and without a promotion heading
    left with nothing under it."""
    lines = memory_text.split("\n")
    drop: set[int] = set()
    for block in promoted_blocks(memory_text):
        if block.key in keys:
            drop.update((block.line, block.line + 1))
    kept = [line for i, line in enumerate(lines) if i not in drop]
    return "\n".join(_drop_empty_sections(kept))


def _drop_empty_sections(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        if SECTION.match(lines[i]):
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j == len(lines) or lines[j].startswith("#"):
                while out and not out[-1].strip():  # the blank line before the heading
                    out.pop()
                i = j
                if j < len(lines):
                    out.append("")
                continue
        out.append(lines[i])
        i += 1
    if lines and lines[-1] == "" and (not out or out[-1] != ""):
        out.append("")
    return out


def make_room(memory_text: str, fits: Fits, protect: Collection[str],
              at_most_recalls: int) -> tuple[str, tuple[str, ...]] | None:
    """`memory_text` with the fewest least-recalled promoted entries (ties: the oldest)
    removed so that it fits; None if it cannot be made to fit. Entries in `protect` (the
    ones being promoted now) and entries recalled more often than `at_most_recalls` (the
    newcomer must not push out a better-proven fact) stay."""
    movable = sorted((b for b in promoted_blocks(memory_text)
                      if b.key not in protect and b.recalls <= at_most_recalls),
                     key=lambda b: (b.recalls, b.line))
    moved: list[str] = []
    text = memory_text
    for block in movable:
        if fits(text):
            break
        moved.append(block.key)
        text = remove_blocks(memory_text, moved)
    return (text, tuple(moved)) if fits(text) else None


class Fits:
    """Whether a MEMORY.md text is within both caps: characters (the bootstrap budget) and
    bytes (`dreaming.deep.max_memory_bytes`, 0 = no byte cap)."""

    def __init__(self, max_chars: int, max_bytes: int) -> None:
        self.max_chars, self.max_bytes = max_chars, max_bytes

    def __call__(self, text: str) -> bool:
        return len(text) <= self.max_chars and (
            self.max_bytes <= 0 or len(text.encode("utf-8")) <= self.max_bytes)

    def describe(self) -> str:
        """The caps as a reader sees them: "20000 characters" or "20000 characters, 16384
        bytes"."""
        return f"{self.max_chars} characters" + (
            f", {self.max_bytes} bytes" if self.max_bytes > 0 else "")


def write_archive(workspace: Path, day: str, blocks: Iterable[PromotedBlock],
                  sources: Iterable[str] = ()) -> str | None:
    """Append `blocks` to the day's archive note (atomically; a block whose marker is already
    there is not written twice, so a retry after a crash adds nothing). Returns its path."""
    rel = archive_path(day)
    current = read_text(workspace, rel, strict=True)
    if current is None and os.path.lexists(workspace / rel):
        # Never rewrite what we could not read faithfully; MEMORY.md stays as it is too.
        raise MemoryFileUnreadableError(f"{workspace / rel} is not a readable UTF-8 file; "
                                        "nothing was moved out of MEMORY.md")
    current = current or ""
    todo = [b for b in blocks if b.text.split("\n")[0] not in current]
    if not todo:
        return None
    head = current if current.strip() else (
        f"# Archived from MEMORY.md ({day})\n\n"
        "Promoted entries moved out of MEMORY.md to keep it within its startup budget.\n")
    body = "".join(f"\n{b.text}\n" for b in todo)
    atomic_write_text(workspace, rel, head.rstrip("\n") + "\n" + body, sources=sources)
    return rel
