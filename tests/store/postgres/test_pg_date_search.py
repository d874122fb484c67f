"""A query naming a date on PostgreSQL: the same answers as on SQLite (tests/dated_notes.py),
the range's notes fetched by path from the namespace, with the real default embedding model."""

from __future__ import annotations

from dated_notes import (
    TRANSCRIPTS_CONFIG,
    check_date_search,
    check_transcript_dates,
    write_notes,
    write_transcripts,
)
from openmemd.api import MemoryIndex


def test_a_date_query_on_postgres(pg_settings, workspace) -> None:
    write_notes(workspace)
    settings = pg_settings('[embedding]\nprovider = "local"\n')
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        check_date_search(index)


def test_transcripts_by_date_on_postgres(make_settings, pg_url, workspace) -> None:
    write_transcripts(workspace)
    settings = make_settings(TRANSCRIPTS_CONFIG + '[embedding]\nprovider = "local"\n'
                             f'[store]\nbackend = "postgres"\nurl = "{pg_url}"\n')
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        check_transcript_dates(index)
