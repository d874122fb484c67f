"""A query naming a date on PostgreSQL: the same answers as on SQLite (tests/dated_notes.py),
the range's notes fetched by path from the namespace, with the real default embedding model."""

from __future__ import annotations

from dated_notes import check_date_search, write_notes
from openmemd.api import MemoryIndex


def test_a_date_query_on_postgres(pg_settings, workspace) -> None:
    write_notes(workspace)
    settings = pg_settings('[embedding]\nprovider = "local"\n')
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        check_date_search(index)
