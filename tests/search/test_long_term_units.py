"""MEMORY.md searched fact by fact (index/blocks.py) on SQLite with the real default model;
tests/store/postgres/test_pg_long_term_units.py runs the same checks on PostgreSQL."""

from __future__ import annotations

from long_term_notes import check_long_term_search, write_workspace
from openmemd.api import MemoryIndex


def test_a_fact_of_memory_md_is_its_own_hit(make_settings, workspace) -> None:
    write_workspace(workspace)
    with MemoryIndex.open(workspace, config=make_settings(provider="local")) as index:
        index.sync()
        check_long_term_search(index, workspace)
