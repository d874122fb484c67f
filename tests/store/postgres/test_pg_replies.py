"""The reply after the best hit's question, on PostgreSQL: the same answer as on SQLite
(tests/conversation_notes.py), with the real default embedding model."""

from __future__ import annotations

from conversation_notes import check_reply_follows_question, write_conversation
from openmemd.api import MemoryIndex


def test_the_answer_after_a_chunk_ending_on_its_question_is_found_on_postgres(
        pg_settings, workspace) -> None:
    write_conversation(workspace)
    with MemoryIndex.open(workspace, config=pg_settings('[embedding]\nprovider = "local"\n')
                          ) as index:
        check_reply_follows_question(index)
