"""The irregular forms of an English verb count as the verb (`text/inflections.py`): a question
asks "did Nate win", the note says "I won"."""

from __future__ import annotations

from openmemd.text.inflections import other_forms
from openmemd.text.tokens import QueryTerms, covered_terms, query_terms


def test_a_verb_has_its_irregular_forms_and_they_have_it():
    assert other_forms("win") == ("won",)
    assert set(other_forms("go")) == {"went", "gone"}
    assert set(other_forms("went")) == {"go", "gone"}
    assert set(other_forms("Bought")) == {"buy"}


def test_words_with_another_meaning_and_regular_words_have_none():
    # "left" is a side, "rose" a flower, "found" a company's start, "saw" a tool
    for word in ("left", "rose", "found", "saw", "table", "paint", "did", "got"):
        assert other_forms(word) == (), word


def test_a_question_in_the_base_form_holds_the_notes_past():
    terms = query_terms("When did Nate win his first video game tournament?")
    held = covered_terms(terms, "- **Nate**: I won my first video game tournament last week!")
    assert held == set(terms.words)
    assert covered_terms(query_terms("what did Maria buy"), "I bought a shadow box") == {"buy"}


def test_a_past_form_asked_holds_the_base_and_its_inflections():
    terms = QueryTerms(words=("won",), cjk=())
    assert covered_terms(terms, "she is winning again") == {"won"}
    assert covered_terms(terms, "what a wonderful day") == set()  # a longer word, not a form


def test_the_focus_is_the_line_in_the_past():
    from openmemd.search.evidence import corpus_idf
    from openmemd.search.focus import focus_of, line_terms

    terms = query_terms("When did Nate meet Tim?")
    text = ("- **John**: Nate, Tim is in town next week.\n"
            "- **Nate**: Cool.\n"
            "- **John**: Anything else?\n"
            "- **John**: How was the trip?\n"
            "- **Nate**: I met Tim and his teammates on the 15th, it was great.\n"
            "- **John**: Nice.")
    lines = line_terms(text, lambda line: covered_terms(terms, line))
    weights = corpus_idf(terms.all, [set(terms.all)])
    # without "met" for "meet", the first line (Nate, Tim) would tie and win
    assert focus_of(10, 15, lines, weights, text.split("\n")).start_line == 14
