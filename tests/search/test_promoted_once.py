"""A promoted MEMORY.md entry is not shown beside the note it copies (search/promoted.py): with
MEMORY.md cut by entry, the copy would take a result's place from the next note."""

from __future__ import annotations

from dataclasses import dataclass

from openmemd.api import MemoryIndex
from openmemd.search.promoted import entry_source, shown_once

NOTE = "# 2026-06-12\n\n- Ana owns the migration of the payments queue to RabbitMQ.\n- Ramen.\n"
ENTRY = ("<!-- openclaw-memory-promotion:memory:memory/2026-06-12.md:3:3 -->\n"
         "- Ana owns the migration of the payments queue to RabbitMQ. Source: "
         "memory/2026-06-12.md#L3-L3 [score=0.861 recalls=4 avg=0.702 "
         "source=memory/2026-06-12.md:3-3]\n")
MEMORY = ("# Long-Term Memory\n\n- Ana reads the RabbitMQ payments queue dashboards daily.\n\n"
          "## Promoted From Short-Term Memory (2026-06-20)\n\n" + ENTRY)
QUERY = "Ana payments queue migration RabbitMQ"


def test_the_note_is_shown_and_its_promoted_copy_is_not(make_settings, workspace) -> None:
    (workspace / "memory" / "2026-06-12.md").write_text(NOTE, encoding="utf-8")
    (workspace / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        index.sync()
        hits = index.search(QUERY, max_results=2, min_score=0.0, record=False)
        # The note and the line the user wrote; the copy of the note's line 3 is left out.
        assert [(h.path, h.start_line) for h in hits] == [("memory/2026-06-12.md", 1),
                                                          ("MEMORY.md", 1)], hits
        # Without the note, the entry is the only copy of the fact: it is shown.
        (workspace / "memory" / "2026-06-12.md").unlink()
        index.sync()
        hits = index.search(QUERY, min_score=0.0, record=False)
        assert any(h.path == "MEMORY.md" and h.end_line == MEMORY.count("\n") for h in hits)


def test_only_a_chunk_of_one_entry_is_a_copy() -> None:
    assert entry_source(ENTRY) == ("memory/2026-06-12.md", 3, 3)
    assert entry_source(ENTRY + ENTRY.replace(":3-3]", ":5-6]")) is None  # a window of two
    assert entry_source("- Ana owns the queue. Source: memory/2026-06-12.md#L3-L3") is None


@dataclass(frozen=True)
class Shown:
    path: str
    start_line: int
    end_line: int
    text: str = ""


def test_the_copy_is_left_out_before_or_after_its_note_and_the_next_fills_its_place() -> None:
    copy = Shown("MEMORY.md", 5, 6, ENTRY)
    note, other = Shown("memory/2026-06-12.md", 1, 4), Shown("memory/2026-06-13.md", 1, 9)
    part = Shown("memory/2026-06-12.md", 4, 9)  # holds line 4, not line 3: not the copy's note
    assert shown_once([copy, note, other], 2) == [note, other]
    assert shown_once([note, copy, other], 2) == [note, other]
    assert shown_once([copy, part, other], 2) == [copy, part]
