"""Pure rules: evidence (does the memory hold anything for a query), focus (which lines of a
hit answer), snippets centred on the focus and cut between words."""

from __future__ import annotations

import re

import pytest

from openmemd.search.candidate import Candidate, weigh_evidence
from openmemd.search.commonness import specificity
from openmemd.search.evidence import (
    coincidental,
    corpus_idf,
    evidence,
    keyword_evidence,
    lone_generic_heads,
    median,
    term_weights,
    without_lone_heads,
)
from openmemd.search.focus import (
    FOCUS_FOLLOWING,
    Focus,
    asks,
    best_line,
    focus_of,
    line_terms,
)
from openmemd.search.snippets import make_snippet
from openmemd.text.tokens import covered_terms, query_terms


def test_a_term_found_nowhere_weighs_most_one_found_everywhere_least():
    found = [{"caroline", "group"}, {"caroline"}, {"caroline", "painting"}]
    w = corpus_idf(["caroline", "group", "kubernetes"], found)
    assert w["kubernetes"] > w["group"] > w["caroline"] > 0


def test_one_common_word_is_not_half_of_the_query():
    # "what did we decide about the kubernetes migration" in notes where only "decide" occurs:
    # flat coverage says 1/3 and the keyword leg ~0.65; weighed by IDF it is far less.
    terms = ["decide", "kubernetes", "migration"]
    found = [{"decide"}, {"decide"}, set(), set(), set(), set()]
    w = term_weights(corpus_idf(terms, found))
    assert keyword_evidence({"decide"}, w) < 0.25
    assert keyword_evidence(set(terms), w) == pytest.approx(1.0)
    assert keyword_evidence(set(), w) == 0.0
    assert keyword_evidence({"x"}, {}) == 0.0


def test_an_ordinary_english_word_says_less_than_a_rare_one():
    # cl100k_base merges frequent strings first: " name" is merge 836, " dentist" 50351
    assert 0 < specificity("name") < specificity("pay") < specificity("dentist") < 1
    assert specificity("Name") == specificity("name")
    # no token of its own (rarer than any token), or nothing to read: weighed by IDF alone
    assert specificity("babysitter") == specificity("2023") == specificity("北京") == 1.0


def test_dentists_name_in_a_memory_that_never_mentions_a_dentist():
    # 24 candidates, one of them naming something: by IDF alone "name" is 45 % of the query
    # (found in 1 of 24 weighs almost what found in none does); as ordinary English, less
    terms = ["dentist", "name"]
    found = [{"name"}] + [set()] * 23
    idf = corpus_idf(terms, found)
    assert keyword_evidence({"name"}, idf) > 0.4
    share = keyword_evidence({"name"}, term_weights(idf))
    assert share < 0.3
    # and one ordinary word of two is a coincidence: its words count for nothing
    assert coincidental(1, 2, share)


def test_two_words_of_the_question_or_its_main_part_are_no_coincidence():
    assert not coincidental(2, 3, 0.3)  # two of the question's words in one chunk
    assert not coincidental(1, 2, 0.7)  # "tell me about kubernetes": the one that matters
    assert not coincidental(1, 1, 0.0)  # a one-word question has nothing else to hold
    assert coincidental(0, 3, 0.0)


def test_a_date_the_question_names_is_one_more_part_a_note_of_its_range_holds():
    # "where did Joanna travel in July 2022": the legs search "where did Joanna travel"; her
    # July note holds "Joanna" and the date, her June note only "Joanna", a coincidence
    def note(day: str, in_range: bool) -> Candidate:
        c = Candidate(day, f"memory/{day}.md", "memory", 1, 2, "- **Joanna**: I went away.")
        c.date = {"inRange": in_range, "day": day if in_range else None, "rule": "boosted"}
        return c

    july, june = note("2022-07-10", True), note("2022-06-03", False)
    weigh_evidence([july, june], query_terms("where did Joanna travel"))
    assert july.keyword_evidence > 0 and july.evidence == july.keyword_evidence
    assert june.keyword_evidence == 0.0
    # which the pipeline also ranks by: June's one word does not lift it (pipeline._score_fused)
    assert june.coincidental and not july.coincidental


def _heads(query: str) -> dict[str, str]:
    terms = query_terms(query)
    return lone_generic_heads(terms.phrases, terms.words)


def test_a_generic_head_is_known_by_its_modifier():
    # the head more common than the word before it: the phrase is about the modifier
    assert _heads("What is Caroline's blood type?") == {"type": "blood"}
    assert _heads("What is Tim's shoe size?") == {"size": "shoe"}
    assert _heads("what is my phone number") == {"number": "phone"}
    # a head more specific than its modifier says what is asked on its own ("Tomorrow's
    # opening will be so much fun" answers "the upcoming grand opening")
    assert "technique" not in _heads("Which popular time management technique does Tim use?")
    assert _heads("the upcoming grand opening") == {}  # "opening" is rarer than "grand"
    # only the last pair of a run is a head with its modifier: "popular time" is no phrase
    assert "time" not in _heads("Which popular time management technique does Tim use?")
    assert _heads("when did Caroline paint a sunrise") == {"paint": "caroline"}  # read as a
    # phrase too (no parts of speech here): the verb then counts as shown beside the name,
    # which every chunk of a chat holds, or beside another word of the question
    assert _heads("what did we decide") == {}  # no two content words side by side
    # one inflection of a word is its term: "sizes" is the term "size" of the phrase
    heads = lone_generic_heads(("shoe sizes",), ("shoe", "sizes"))
    assert heads == {"sizes": "shoe"}


def test_a_head_without_its_modifier_is_not_one_of_the_words_held():
    heads = {"type": "blood"}
    assert without_lone_heads(frozenset({"caroline", "type"}), heads) == {"caroline"}
    assert without_lone_heads(frozenset({"caroline", "blood", "type"}), heads) == {
        "caroline", "blood", "type"}
    assert without_lone_heads(frozenset({"blood"}), heads) == {"blood"}


def test_a_lone_generic_head_shows_no_answer_but_still_ranks():
    # "What is Caroline's blood type?" in a chat where "Caroline" is in every chunk: the one
    # with "What type of music do you play?" holds two of the question's words, but "type"
    # is not "blood type"; the one saying "blood type" holds the phrase
    def chunk(i: int, text: str) -> Candidate:
        c = Candidate(str(i), f"memory/2023-05-0{i}.md", "memory", 1, 2, text)
        c.vector_cosine = c.vector_score = 0.5
        return c

    music = chunk(1, "- **Caroline**: What type of music do you play?")
    blood = chunk(2, "- **Caroline**: My blood type is O negative.")
    rest = [chunk(i, f"- **Caroline**: Day {i} was fine.") for i in range(3, 8)]
    weigh_evidence([music, blood, *rest], query_terms("What is Caroline's blood type?"),
                   lambda cosine: cosine)
    assert not music.coincidental  # it ranks by both words it holds ...
    assert music.keyword_evidence > 0
    assert music.evidence == pytest.approx(0.5 * 0.5)  # ... but they show no answer
    assert blood.evidence > 0.5


def test_words_in_another_sense_are_no_keyword_match():
    # The relaxed fallback shows keyword hits holding half the question's information when
    # nothing passes; "both blood and the ones we choose" holds "Caroline" and "blood" but
    # sits below the median candidate by meaning: no match. The note naming the phrase whole
    # stays one, however far its meaning.
    def chunk(i: int, text: str, cosine: float) -> Candidate:
        c = Candidate(str(i), f"memory/2023-05-0{i}.md", "memory", 1, 2, text)
        c.vector_cosine = c.vector_score = cosine
        return c

    family = chunk(1, "- **Caroline**: Love in families - both blood and the ones we choose.", 0.2)
    typed = chunk(2, "- **Caroline**: My blood type is O negative.", 0.1)
    rest = [chunk(i, f"- **Caroline**: Day {i} was fine.", 0.4) for i in range(3, 8)]
    weigh_evidence([family, typed, *rest], query_terms("What is Caroline's blood type?"),
                   lambda cosine: cosine)
    assert family.keyword_evidence == 0.0 and family.evidence < 0.35
    assert typed.keyword_evidence == pytest.approx(1.0)


def test_evidence_needs_words_and_meaning_or_meaning_that_stands_out():
    # meaning alone, as close as the query's median candidate (a flat distribution): nothing
    assert evidence(0.58, 0.0, baseline=0.45) < 0.35
    # the same vector score standing out from a low median: a paraphrase passes
    assert evidence(0.52, 0.0, baseline=0.1) >= 0.35
    # words and meaning together
    assert evidence(0.4, 0.6, baseline=0.3) == pytest.approx(0.5)
    # words in a chunk whose meaning is below the query's median candidate's are in another
    # sense ("both blood and the ones we choose" for "Caroline's blood type"): nothing
    assert evidence(0.28, 0.7, baseline=0.38) < 0.35
    assert evidence(0.38, 0.7, baseline=0.38) == pytest.approx(0.54)
    # ... but a chunk holding every word of the question holds them as asked, however close
    # other notes come by meaning ('"payments queue"' among 200 days of work notes, where
    # the notes about billing and Kafka sat above the one naming the queue)
    assert evidence(0.28, 1.0, baseline=0.38) == pytest.approx(0.64)
    # no vector (keyword-only search): the keyword evidence is the only reading
    assert evidence(None, 0.8, baseline=1.0) == pytest.approx(0.8)
    assert median([]) is None and median([3.0, 1.0, 2.0]) == 2.0
    assert median([1.0, 4.0]) == 2.5


CHAT = "\n".join([
    "- **Mel**: How was the weekend?",
    "- **Caro**: Busy! What about you?",
    "- **Mel**: Why did you pick that adoption agency in the end?",
    "- **Caro**: They help LGBTQ+ folks and were so kind to us.",
    "- **Mel**: That is lovely.",
    "- **Caro**: Thanks! Going hiking tomorrow.",
])


def _lines(query: str, text: str = CHAT) -> list[set[str]]:
    terms = query_terms(query)
    return line_terms(text, lambda line: covered_terms(terms, line))


def test_focus_starts_at_the_best_line_and_takes_the_lines_after_it():
    lines = _lines("why did Caro choose the adoption agency")
    weights = corpus_idf(query_terms("why did Caro choose the adoption agency").all, lines)
    assert best_line(lines, weights) == 2
    focus = focus_of(10, 15, lines, weights)  # the chunk is lines 10-15 of its file
    assert (focus.start_line, focus.end_line) == (12, 12 + FOCUS_FOLLOWING)  # the reply: 13


def test_a_focus_ending_on_a_question_takes_the_reply():
    # "Busy! What about you?" ends the window of the best line: the answer is the next line
    lines = _lines("how was the weekend")
    weights = corpus_idf(query_terms("how was the weekend").all, lines)
    texts = CHAT.split("\n")
    assert [asks(line) for line in texts] == [True, True, True, False, False, False]
    focus = focus_of(10, 15, lines, weights, texts)
    assert (focus.start_line, focus.end_line) == (10, 13)
    # a window ending on a statement stays three lines; the reply is never past the chunk
    statements = [t.replace("?", ".") for t in texts]
    assert focus_of(10, 15, lines, weights, statements) == focus_of(10, 15, lines, weights)
    assert (focus_of(10, 12, lines[:3], weights, texts[:3]).end_line) == 12
    assert asks("- **A**: Nice! Where was it? [shared a photo: a lake]") and asks("好吗？")
    assert not asks("- **A**: I asked why? Because.")


def test_a_focus_on_a_heading_starts_at_what_it_heads():
    # "## Conversation between Joanna and Nate" holds "Joanna"; what happened is below it
    texts = ["## Conversation between Joanna and Nate at 2:01 pm", "",
             "- **Joanna**: I finished my first screenplay!", "- **Nate**: Wow, congrats!",
             "- **Joanna**: Thanks! It took a year.", "- **Nate**: What is it about?"]
    terms = query_terms("what did Joanna accomplish")
    lines = line_terms("\n".join(texts), lambda line: covered_terms(terms, line))
    weights = corpus_idf(terms.all, lines)
    assert best_line(lines, weights) == 0  # the heading holds the most (ties to the earlier)
    focus = focus_of(1, 6, lines, weights, texts)
    assert (focus.start_line, focus.end_line) == (3, 5)
    # without the texts (or with a heading and nothing under it) the best line stays
    assert focus_of(1, 6, lines, weights).start_line == 1
    assert focus_of(1, 1, lines[:1], weights, texts[:1]).start_line == 1


def test_focus_stays_inside_the_chunk_and_falls_back_to_it():
    lines = _lines("hiking tomorrow")
    weights = corpus_idf(["hiking", "tomorrow"], lines)
    focus = focus_of(10, 15, lines, weights)
    assert (focus.start_line, focus.end_line) == (15, 15)  # the last line: nothing after it
    # no line holds a query term: the whole chunk
    nothing = _lines("quantum chromodynamics")
    assert best_line(nothing, corpus_idf(["quantum"], nothing)) is None
    assert focus_of(10, 15, nothing, {"quantum": 1.0}) == focus_of(10, 15, [set()] * 6, {})
    assert (focus_of(10, 15, nothing, {}).start_line, focus_of(10, 15, nothing, {}).end_line) \
        == (10, 15)
    # lines that do not map onto the range (a transcript chunk): the whole chunk
    assert (focus_of(3, 40, lines, weights).start_line,
            focus_of(3, 40, lines, weights).end_line) == (3, 40)
    # ... and of a chunk whose lines are known, its body: not the day's heading, the session's
    # heading or the blank lines around them
    day = ["# 2023-05-08 (Monday)", "", "## Conversation at 1:56 pm", "", *CHAT.split("\n"), ""]
    nothing = [set()] * len(day)
    assert focus_of(1, len(day), nothing, {}, day) == Focus(5, 10)


def _words(text: str) -> list[str]:
    return re.findall(r"\S+", text)


@pytest.mark.parametrize("focus_line", [0, 40, 79])
def test_snippet_is_centred_on_the_focus_and_never_cuts_a_word(focus_line):
    text = "\n".join(f"line {i} alpha bravo charlie delta echo foxtrot golf hotel"
                     for i in range(80))
    snippet = make_snippet(text, 300, focus=(focus_line, focus_line))
    assert len(snippet) <= 300
    assert f"line {focus_line} alpha" in snippet
    words = _words(text)
    got = _words(snippet)
    # every word of the snippet is a whole word of the text, in order
    start = next(i for i in range(len(words)) if words[i:i + len(got)] == got)
    assert words[start:start + len(got)] == got


def test_snippet_of_a_short_text_or_without_spaces():
    assert make_snippet("short note", 700, focus=(0, 0)) == "short note"
    cjk = "我们在北京的故宫博物院参观了一整天" * 60
    snippet = make_snippet(cjk, 100, focus=(0, 0))
    assert 0 < len(snippet) <= 100 and cjk.startswith(snippet)
    blob = "x" * 1000  # one "word" longer than the limit: cut on a grapheme
    assert make_snippet(blob, 50) == "x" * 50


def test_a_snippet_starts_at_a_line_where_one_lies_before_the_focus():
    text = "\n".join(f"- item {i}: coffee beans and oat milk from the shop" for i in range(40))
    snippet = make_snippet(text, 300, focus=(20, 20))
    assert snippet.startswith("- item ") and "- item 20:" in snippet
    # one long line before the focus: the window starts at a whole word of it, not at the
    # focus (the focus's own line start is no place to start its context)
    long_line = " ".join(f"word{i}" for i in range(200))
    snippet = make_snippet(long_line + "\nthe focus line", 300, focus=(1, 1))
    assert snippet.endswith("the focus line") and snippet.split()[0] in long_line.split()
