"""covered_terms finds exactly the words a full tokenisation of the chunk would: a query word is
covered when some \\w-run of the lowercased text (CJK runs apart) has its light stem, or that of
another form of its verb ("won" for "win")."""

from __future__ import annotations

import random
import re

from openmemd.text import tokens
from openmemd.text.inflections import other_forms
from openmemd.text.tokens import QueryTerms, covered_terms, light_stem

_WORD_RUN = re.compile(r"\w+")


def _by_tokenising(terms: QueryTerms, text: str) -> set[str]:
    """The definition, computed the slow way: every word of the text stemmed."""
    hits = {g for g in terms.cjk if g in text}
    lowered = tokens.CJK_RUN.sub(" ", text.lower())
    stems = {light_stem(v) for v in _WORD_RUN.findall(lowered)}
    hits.update(w for w in terms.words
                if any(light_stem(f) in stems for f in (w, *other_forms(w))))
    return hits


# Words that are prefixes, inflections and substrings of one another, and characters at the
# edges of \w: underscore, digits, accents, a Kelvin sign (lowercases to ASCII "k"), a dotted
# capital I (lowercases to two characters), CJK glued to Latin, emoji, control characters.
_PIECES = ["note", "notes", "noted", "not", "nothing", "denote", "keynote", "run", "running",
           "runner", "runs", "group", "groups", "regroup", "kelvin", "\u212aelvin", "İstanbul",
           "ran", "win", "won", "winning", "wonder", "went", "go", "gone",
           "istanbul", "café", "cafés", "rejection", "rejected", "vacationed", "vacation", "nation",
           "a", "is", "x1", "note_2", "_note", "北京", "北京run",
           "run北京", "😀note", "n\u00f6te", "NOTE", "Notes,", "(running)", "re-group", "it's"]
_GLUE = [" ", " ", " ", "", ".", ",", "_", "-", "'", "\n", "\t", "\x1f", "\u3000", "北", "7"]


def test_covered_terms_matches_tokenising_the_whole_chunk():
    rng = random.Random(13)
    for _ in range(3000):
        text = "".join(rng.choice(_PIECES) + rng.choice(_GLUE)
                       for _ in range(rng.randint(0, 12)))
        words = tuple(dict.fromkeys(
            w for w in (rng.choice(_PIECES).lower() for _ in range(rng.randint(1, 4)))
            if re.fullmatch(r"[^\W_]+", w) and not tokens.CJK_RUN.search(w)))
        terms = QueryTerms(words=words, cjk=("北京",) if rng.random() < 0.2 else ())
        assert covered_terms(terms, text) == _by_tokenising(terms, text), (terms, text)


def test_a_word_inside_another_word_is_not_covered():
    terms = QueryTerms(words=("note",), cjk=())
    assert covered_terms(terms, "denote keynote_x") == set()
    assert covered_terms(terms, "a denote, then notes") == {"note"}
    assert covered_terms(terms, "北京notes") == {"note"}  # CJK runs are separators


def test_a_word_ending_in_ss_is_not_a_plural():
    # "pass" lost its last "s" as if plural, so "When did Maria's grandmother pass away?" did
    # not count the note's "passed away" as holding "pass" (nor "class" its "classes").
    assert light_stem("pass") == light_stem("passed") == light_stem("passes") == "pass"
    assert light_stem("class") == light_stem("classes")
    assert covered_terms(QueryTerms(words=("pass", "away", "class"), cjk=()),
                         "my grandma passed away; two classes") == {"pass", "away", "class"}
    assert light_stem("notes") == light_stem("note")  # a plain plural still matches


def test_a_word_and_its_regular_inflections_share_a_stem():
    # One strip made "ordered" "order" but "order" "ord": "what did I order on Dec 1" saw no
    # word of its own in "Ordered a new keyboard" (found by the keyword index) and returned
    # nothing; "played" / "play", "offered" / "offer" alike.
    for word, *forms in (("order", "ordered", "orders", "ordering"), ("play", "played", "plays"),
                         ("offer", "offered", "offers"), ("remember", "remembered"),
                         ("enjoy", "enjoyed"), ("answer", "answered", "answers")):
        assert {light_stem(f) for f in forms} == {light_stem(word)}, word
    assert covered_terms(QueryTerms(words=("order",), cjk=()),
                         "- Ordered a new mechanical keyboard.") == {"order"}
    assert light_stem("order") != light_stem("ordinary")


def test_y_and_short_verbs_stem_as_their_inflections():
    # Porter's y -> i: "family" had stemmed "fami" ("ly" off), "families" "famil"; "movie"
    # "movi", "movies" "mov"; "try" "try", "tried" "tri"; and "used" kept all four letters
    for word, *forms in (("family", "families"), ("movie", "movies"), ("try", "tried", "tries"),
                         ("city", "cities"), ("reply", "replied", "replies"),
                         ("use", "used", "uses", "using"), ("cliff", "cliffs"),
                         ("stuff", "stuffed"), ("early", "earlier")):
        assert {light_stem(f) for f in forms} == {light_stem(word)}, word
    # an adverb in -ly still holds its adjective; "thing" is no "the"
    assert light_stem("really") == light_stem("real") and light_stem("lovely") == light_stem("love")
    assert light_stem("thing") != light_stem("the")
    assert covered_terms(QueryTerms(words=("family", "city", "use"), cjk=()),
                         "using the car, we visit the cities with our families") == {
                             "family", "city", "use"}


def test_a_noun_in_ion_holds_its_verb():
    # The keyword index (Porter) matched "rejection" for "rejected", but coverage did not:
    # "How many times has Joanna's scripts been rejected?" saw a note of "a rejection letter"
    # as holding only "Joanna", a coincidence.
    assert light_stem("rejection") == light_stem("rejected") == light_stem("rejections")
    assert light_stem("promotion") == light_stem("promoted")
    assert light_stem("question") == light_stem("questions") == light_stem("questioned")
    assert light_stem("vacation") == light_stem("vacationed") == light_stem("vacations")
    assert light_stem("information") == light_stem("informed")  # -ation keeps its rule
    assert light_stem("nation") == "nation" and light_stem("action") == "action"  # too short
    assert covered_terms(QueryTerms(words=("rejected", "promotion"), cjk=()),
                         "a rejection letter; she got promoted") == {"rejected", "promotion"}
