"""A promoted MEMORY.md entry is not shown beside the note it copies (search/promoted.py): with
MEMORY.md cut by entry, the copy would take a result's place from the next note."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from long_term_notes import COPY_ENTRY, check_copy_left_out, check_copy_ranks_after_note
from openmemd.api import MemoryIndex
from openmemd.search.promoted import entry_source, rank_after_sources, shown_once


def test_the_note_is_shown_and_its_promoted_copy_is_not(make_settings, workspace) -> None:
    check_copy_left_out(workspace, lambda: MemoryIndex.open(workspace, config=make_settings()))


@pytest.mark.parametrize("provider", ["none", "local"])  # keyword-only and hybrid
def test_the_copy_ranks_after_its_note_however_long_the_note(make_settings, workspace,
                                                             provider) -> None:
    settings = make_settings(provider=provider)
    check_copy_ranks_after_note(workspace, lambda: MemoryIndex.open(workspace, config=settings))


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


@dataclass
class Ranked:
    path: str
    start_line: int
    end_line: int
    text: str = ""
    score: float = 0.0
    gate: float = 1.0


def test_a_copy_ranks_just_below_the_best_chunk_holding_its_source_lines() -> None:
    copy = Ranked("MEMORY.md", 5, 6, COPY_ENTRY, 0.9)
    note = Ranked("memory/2026-06-12.md", 1, 30, score=0.4)
    other = Ranked("memory/2026-06-12.md", 2, 3, score=0.6)  # also holds line 3: the best
    part = Ranked("memory/2026-06-12.md", 4, 9, score=0.8)  # not line 3
    user = Ranked("MEMORY.md", 1, 1, "- Ana reads the dashboards.", 0.95)
    rank_after_sources([copy, note, other, part, user], 0.35)
    assert other.score > copy.score > 0.59 and user.score == 0.95 and part.score == 0.8
    low = Ranked("MEMORY.md", 5, 6, COPY_ENTRY, 0.3)  # already below its note: unchanged
    rank_after_sources([low, note], 0.35)
    assert low.score == 0.3
    alone = Ranked("MEMORY.md", 5, 6, COPY_ENTRY, 0.9)  # its note is not a candidate
    rank_after_sources([alone, part], 0.35)
    assert alone.score == 0.9
    # its note does not pass min_score (a long day): the copy is what shows the fact
    weak = Ranked("memory/2026-06-12.md", 1, 30, score=0.3, gate=0.3)
    shown = Ranked("MEMORY.md", 5, 6, COPY_ENTRY, 0.6)
    rank_after_sources([shown, weak], 0.35)
    assert shown.score == 0.6
    rank_after_sources([shown, weak], 0.0)  # at min_score 0 the note can be shown
    assert shown.score < 0.3
