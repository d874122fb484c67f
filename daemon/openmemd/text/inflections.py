"""The forms of an English word that no suffix rule reaches: irregular verbs.

A question asks with the base form ("When did Nate win his first tournament?", "Where did Maria
go?") and the note it is about tells in the past ("I won my first tournament", "we went to the
shelter"). Stemming strips suffixes, so "painted" meets "paint", but "won" never meets "win".
`covered_terms` (text/tokens.py) counts the other forms of a query word's verb as the word
itself, so what judges a chunk by the words it holds knows "won" is "win": the coverage that
weighs a keyword hit, the evidence that says whether the memory holds an answer, and the focus
line. The keyword leg does not search the forms: "went", "made", "said" are in most chunks of
a chat, and the vector leg already finds "we went to the beach" for "go to the beach"
(docs/benchmarks.md, "irregular verbs").

Left out are forms that are also common words of another meaning, which would bring in notes
about something else: "left" (the side), "rose" (the flower), "saw" (the tool), "found" (a
company), "felt", "fell", "lit", "bit", "lay", "lie", "ground", "wound", "bound", "bore", "lead",
"meant", "spoke", "fed", "bear", "ring", "rung", "tear", "dove", "stole" (a scarf), "shed".
"""

from __future__ import annotations

from functools import lru_cache

# base: its irregular past and past participle (the regular -s/-ing forms stem to the base)
_VERBS = """
arise arose arisen | awake awoke awoken | become became | begin began begun | bend bent |
bite bitten | bleed bled | blow blew blown | break broke broken | breed bred | bring brought |
build built | burn burnt | buy bought | catch caught | choose chose chosen | cling clung |
come came | creep crept | deal dealt | dig dug | draw drew drawn | dream dreamt |
drink drank drunk | drive drove driven | eat ate eaten | fight fought | flee fled |
fly flew flown | forbid forbade forbidden | forget forgot forgotten |
forgive forgave forgiven | freeze froze frozen | give gave given |
go went gone | grow grew grown | hang hung | hear heard | hide hid hidden | hold held |
keep kept | kneel knelt | know knew known | learn learnt | lend lent | lose lost | make made |
meet met | pay paid | prove proven | ride rode ridden | rise risen | run ran | say said |
see seen | seek sought | sell sold | send sent | shake shook shaken | shine shone |
shoot shot | show shown | shrink shrank shrunk | sing sang sung | sink sank sunk | sit sat |
sleep slept | slide slid | speak spoken | spend spent | spin spun | spring sprang sprung |
stand stood | steal stolen | stick stuck | sting stung | stink stank stunk | strike struck |
swear swore sworn | sweep swept | swim swam swum | swing swung | take took taken |
teach taught | tell told | think thought | throw threw thrown | understand understood |
wake woke woken | wear wore worn | weep wept | win won | write wrote written
"""


def _table() -> dict[str, tuple[str, ...]]:
    forms: dict[str, tuple[str, ...]] = {}
    for entry in _VERBS.split("|"):
        verb = tuple(entry.split())
        for word in verb:
            forms[word] = tuple(w for w in verb if w != word)
    return forms


_FORMS = _table()


@lru_cache(maxsize=4096)
def other_forms(word: str) -> tuple[str, ...]:
    """The other forms of `word`'s verb when it is one of an irregular English verb's ("win":
    ("won",); "went": ("go", "gone")); () for any other word."""
    return _FORMS.get(word.lower(), ())
