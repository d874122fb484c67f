"""A promoted MEMORY.md entry is not shown beside the note it copies (search/promoted.py): with
MEMORY.md cut by entry, the copy would take a result's place from the next note."""

from __future__ import annotations

from dataclasses import dataclass

from long_term_notes import COPY_ENTRY, check_copy_left_out
from openmemd.api import MemoryIndex
from openmemd.search.promoted import entry_source, shown_once


def test_the_note_is_shown_and_its_promoted_copy_is_not(make_settings, workspace) -> None:
    check_copy_left_out(workspace, lambda: MemoryIndex.open(workspace, config=make_settings()))


def test_only_a_chunk_of_one_entry_is_a_copy() -> None:
    assert entry_source(COPY_ENTRY) == ("memory/2026-06-12.md", 3, 3)
    two = COPY_ENTRY + COPY_ENTRY.replace(":3-3]", ":5-6]")  # a window of two entries
    assert entry_source(two) is None
    assert entry_source("- Ana owns the queue. Source: memory/2026-06-12.md#L3-L3") is None


@dataclass(frozen=True)
class Shown:
    path: str
    start_line: int
    end_line: int
    text: str = ""


def test_the_copy_is_left_out_before_or_after_its_note_and_the_next_fills_its_place() -> None:
    copy = Shown("MEMORY.md", 5, 6, COPY_ENTRY)
    note, other = Shown("memory/2026-06-12.md", 1, 4), Shown("memory/2026-06-13.md", 1, 9)
    part = Shown("memory/2026-06-12.md", 4, 9)  # holds line 4, not line 3: not the copy's note
    assert shown_once([copy, note, other], 2) == [note, other]
    assert shown_once([note, copy, other], 2) == [note, other]
    assert shown_once([copy, part, other], 2) == [copy, part]
