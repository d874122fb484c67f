"""MEMORY.md searched fact by fact on PostgreSQL: the same answers as on SQLite
(tests/long_term_notes.py), with the real default embedding model."""

from __future__ import annotations

from long_term_notes import (
    check_copy_left_out,
    check_copy_ranks_after_note,
    check_long_term_search,
    write_workspace,
)
from openmemd.api import MemoryIndex


def test_a_fact_of_memory_md_is_its_own_hit_on_postgres(pg_settings, workspace) -> None:
    write_workspace(workspace)
    settings = pg_settings('[embedding]\nprovider = "local"\n')
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        check_long_term_search(index, workspace)


def test_a_promoted_copy_is_not_shown_beside_its_note_on_postgres(pg_settings, workspace) -> None:
    settings = pg_settings("")
    check_copy_left_out(workspace, lambda: MemoryIndex.open(workspace, config=settings))


def test_a_promoted_copy_ranks_after_its_note_on_postgres(pg_settings, workspace) -> None:
    settings = pg_settings('[embedding]\nprovider = "local"\n')
    check_copy_ranks_after_note(workspace, lambda: MemoryIndex.open(workspace, config=settings))
