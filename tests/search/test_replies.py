"""The chunk after the best hit ending on a question ranks right after it (search/replies.py):
the rules on their own, then a real index with the real default model
(tests/conversation_notes.py; tests/store/postgres/test_pg_replies.py runs it on PostgreSQL)."""

from __future__ import annotations

from conversation_notes import check_reply_follows_question, write_conversation
from openmemd.api import MemoryIndex
from openmemd.search.candidate import Candidate
from openmemd.search.replies import asks_at_end, next_chunk, rank_reply
from openmemd.text.tokens import query_terms

TERMS = query_terms("what does John want to do after basketball")


def chunk(id_: str, start: int, end: int, text: str, *, score: float = 0.0,
          gate: float | None = None, path: str = "memory/2023-09-21.md",
          namespace: str = "") -> Candidate:
    c = Candidate(id_, path, "memory", start, end, text, score=score,
                  gate=score if gate is None else gate, namespace=namespace)
    c.order = int(id_.strip("abcdefghijklmnopqrstuvwxyz") or 0)
    return c


def test_a_chunk_asks_at_its_end_when_its_last_line_is_a_question_about_the_query() -> None:
    assert asks_at_end("- a: hi\n- Tim: Thoughts on life after basketball?\n\n", TERMS)
    assert asks_at_end("- Tim: And basketball? [shared a photo: a court]", TERMS)
    assert not asks_at_end("- Tim: How was the weekend?", TERMS)  # no query term
    assert not asks_at_end("- Tim: After basketball?\n- John: A foundation.", TERMS)
    assert not asks_at_end("", TERMS)


def test_the_next_chunk_starts_inside_or_right_after_and_ends_later() -> None:
    first = chunk("c1", 1, 11, "")
    overlap, after, inside, other_file, other_space = (
        chunk("c2", 10, 18, ""), chunk("c3", 12, 20, ""), chunk("c4", 3, 9, ""),
        chunk("c5", 10, 18, "", path="memory/2023-09-22.md"),
        chunk("c6", 10, 18, "", namespace="team"))
    assert next_chunk(first, [inside, other_file, other_space, after, overlap]) is overlap
    assert next_chunk(first, [after, inside]) is after
    assert next_chunk(first, [inside, other_file, other_space, first]) is None
    assert next_chunk(first, [chunk("c7", 13, 20, "")]) is None  # a gap: not its continuation


def test_the_best_hits_reply_ranks_right_after_it_and_passes_where_it_does() -> None:
    best = chunk("a1", 1, 11, "- Tim: What about life after basketball?", score=0.6)
    other = chunk("a2", 1, 5, "- John: I signed with a new team.", score=0.5)
    reply = chunk("a3", 10, 18, "- Tim: What about life after basketball?\n- John: A foundation.",
                  score=0.2, gate=0.2)
    rank_reply([best, other, reply], TERMS, min_score=0.35)
    assert other.score < reply.score < best.score
    assert reply.gate == best.gate


def test_only_the_best_passing_hit_brings_its_reply() -> None:
    asking = chunk("a1", 1, 11, "- Tim: What about life after basketball?", score=0.5)
    best = chunk("a2", 1, 5, "- John: I signed with a new team.", score=0.6)
    reply = chunk("a3", 10, 18, "- John: A foundation.", score=0.2)
    rank_reply([asking, best, reply], TERMS, min_score=0.35)
    assert reply.score == 0.2  # the best hit does not end on a question
    rank_reply([asking, reply], TERMS, min_score=0.95)  # nothing passes: nothing moves
    assert reply.score == 0.2
    # The best by score does not pass min_score: the best that passes is the asking one.
    failing = chunk("a4", 1, 5, "- John: I signed with a new team.", score=0.9, gate=0.1)
    rank_reply([failing, asking, reply], TERMS, min_score=0.35)
    assert failing.score > asking.score > reply.score > 0.49


def test_a_reply_already_above_its_question_stays_where_it_is() -> None:
    best = chunk("a1", 1, 11, "- Tim: What about life after basketball?", score=0.6)
    reply = chunk("a2", 10, 18, "- John: A foundation.", score=0.7, gate=0.2)
    rank_reply([reply, best], TERMS, min_score=0.35)
    assert (reply.score, reply.gate) == (0.7, 0.2)


def test_the_answer_after_a_chunk_ending_on_its_question_is_found(make_settings,
                                                                     workspace) -> None:
    write_conversation(workspace)
    with MemoryIndex.open(workspace, config=make_settings(provider="local")) as index:
        check_reply_follows_question(index)
