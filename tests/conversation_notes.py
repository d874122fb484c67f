"""A day of chat kept as a daily note (LoCoMo's shape: one line a turn) whose first chunk
ends on Tim's question and whose second chunk, starting on that question, holds John's
answer; and an earlier day about John's career that answers nothing. For the reply that ranks
right after its question (search/replies.py), on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from openmemd.api import MemoryIndex

DAY = "memory/2023-09-21.md"
LINES = [
    "# 2023-09-21",
    "",
    (
        '- **Tim**: Hey John! Long time no see. How was the trip to Chicago with the team? I '
        'saw the photos of the city and the lake, it looked like a great weekend away from the '
        'court.'),
    (
        '- **John**: It was great, Tim! We walked along the lake, ate deep-dish pizza twice and'
        ' visited the architecture museum downtown. The coach even let us skip one practice, '
        'which never happens, and we spent the free afternoon on a boat tour along the river '
        'looking at the old skyscrapers and bridges.'),
    (
        '- **Tim**: You have had such a long basketball career already. Do you still love the '
        'game as much as when you started playing in high school with your brother?'),
    (
        '- **John**: Even more, honestly. My basketball career has given me everything: my '
        'friends, my travels, my confidence. I want to keep playing as long as my body lets me,'
        ' maybe five more seasons.'),
    (
        '- **Tim**: Five seasons is a lot of games! I spent the weekend reorganising my '
        'bookshelf and finally finished the fantasy series I told you about, the one with the '
        'dragons.'),
    (
        '- **John**: Nice! Was the ending any good? I remember you were worried the author '
        'would rush it after the long wait between the fourth and the fifth book.'),
    (
        '- **Tim**: It was a bit rushed, but the last chapter made up for it. Speaking of '
        'endings, the end of a career must be strange to think about for a professional '
        'athlete.'),
    (
        '- **John**: It is, a little. Training is intense now: strength work in the morning, '
        'shooting drills in the afternoon and film sessions at night. My knee feels good again.'),
    "- **Tim**: Glad to hear the knee is fine. What are your thoughts on life after basketball?",
    (
        "- **John**: I have thought about it a lot. I'd like to use my platform to make a "
        'positive difference, maybe start a foundation and do charity work for kids in my home '
        'town.'),
    (
        '- **Tim**: That is a wonderful goal, and I am sure the kids will love it. Let me know '
        'if I can help with anything, even just spreading the word online with my readers.'),
    (
        '- **John**: Thanks, Tim! That means a lot. I will send you the details once we have a '
        'name and a plan. Now tell me more about the magazine and the articles you are writing.'),
    (
        '- **Tim**: Sure! I am also planning a trip to the UK next month to visit the castles '
        'and a few bookshops in Edinburgh that my readers keep recommending to me.'),
    (
        '- **John**: Edinburgh is beautiful in autumn. Bring a warm coat and good shoes, the '
        'old town is all hills and cobblestones, and it rains almost every afternoon.'),
    (
        '- **Tim**: Noted! I also want to find a first edition of a fantasy novel there. One of'
        ' the shops is famous for its rare books and its cat that sleeps in the window.'),
    (
        '- **John**: Ha, send me a photo of the cat. Good luck with the hunt for the first '
        'edition, and with the article for the magazine next Friday.'),
]
QUESTION_LINE = 11  # "What are your thoughts on life after basketball?"
ANSWER_LINE = 12  # "... maybe start a foundation and do charity work ..."

OTHER_DAY = "memory/2023-08-11.md"
OTHER = [
    "# 2023-08-11",
    "",
    "- **John**: Big news, Tim: I signed with a new team today, a good step for my career.",
    "- **Tim**: Congratulations, John! A new city, new teammates and a new coach.",
]


def write_conversation(root: Path) -> None:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / DAY).write_text("\n".join(LINES) + "\n", encoding="utf-8")
    (root / OTHER_DAY).write_text("\n".join(OTHER) + "\n", encoding="utf-8")


def check_reply_follows_question(index: MemoryIndex) -> None:
    """The chunk ending on Tim's question matches best; the next one, holding the answer,
    comes right after it (it matched worse than the other day's note, or not at all)."""
    index.sync()
    hits = index.search("What does John want to do after his basketball career?",
                        max_results=6, record=False)
    where = [(h.path, h.start_line, h.end_line) for h in hits]
    assert where[0][0] == DAY and where[0][2] == QUESTION_LINE, where  # ends on the question
    reply = hits[1]
    assert (reply.path, reply.start_line) == (DAY, QUESTION_LINE - 1), where
    assert reply.start_line <= QUESTION_LINE < ANSWER_LINE <= reply.end_line
    assert reply.focus_start <= ANSWER_LINE <= reply.focus_end, reply.citation
    assert reply.score <= hits[0].score
    assert [h.path for h in hits[2:]] == [OTHER_DAY], where
