"""A date question's keyword match never rests on the words that name the memory itself
("notes", "memory"): every note is one, so a chunk that says "notes" is no answer to
"what did I write in my notes on May 3"."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from openmemd.api import MemoryIndex

TODAY = date(2026, 12, 7)


@pytest.mark.parametrize("query", [
    "what did I write in my notes on May 3",  # the date alone is asked for
    "what did I write in my notes about the garden on May 3 2020",  # no note near: fallback
    "my notes about the garden from May 3",  # notes near it
])
def test_a_chunk_saying_notes_is_no_answer_to_a_date_question(
        workspace: Path, make_settings: Any, query: str) -> None:
    notes = workspace / "memory"
    (notes / "2026-04-20.md").write_text("- Took notes on the Rust book chapter 4\n")
    (notes / "2026-05-02.md").write_text("- Bought a bike\n")
    (notes / "2026-06-10.md").write_text("- Dentist appointment moved\n")
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        index.sync()
        found = index.search(query, min_score=0.0, today=TODAY, record=False)
    assert "memory/2026-04-20.md" not in [r.path for r in found], found
