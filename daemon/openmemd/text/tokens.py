"""Text → keyword-search terms, shared by the indexer (`fts_index_text`) and the query side.

A keyword index's word tokenizer splits on anything that is not a letter or digit, so a run
of Chinese, Japanese or Korean characters is one giant token and a query word inside it never
matches. The index therefore stores every CJK run as its bigrams
followed by its unigrams (`北京大学` → `北京 京大 大学 北 京 大 学`), separated from Latin text by
spaces; Latin text is left as it is so stemming still works. Queries use the bigrams of each
CJK run (a lone CJK character uses its unigram, which the index also holds), so one- and
two-character terms match without any LIKE fallback.

Natural questions become quoted terms with English stop words removed (unless the query is
nothing but stop words), plus each pair of adjacent content words as a phrase ("support
group"); ranking by relevance with a coverage factor (see `search/keyword.py`) puts chunks
containing all terms first. Every term is made of letters and digits only (`is_term`), so a
backend can quote it in its query syntax without any user input escaping.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from openmemd.text.inflections import other_forms

# Han (with extensions and compatibility ideographs), iteration marks, kana (incl. half-width
# and the prolonged sound mark) and Hangul: the scripts written without spaces between words
# (Korean has spaces, but particles glue onto nouns, so bigrams help there too).
_CJK_CLASS = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3005\u3007"  # 々 〇
    "\u3041-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana (incl. ー)
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0002fa1f"  # CJK extensions B-F, compatibility supplement
)
CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
_CJK_CHAR = re.compile(f"[{_CJK_CLASS}]")
# Letters and digits only: underscores and marks are separators for unicode61 too, and a term
# that tokenizes to nothing would turn an AND query into "match nothing".
_WORD = re.compile(r"[^\W_]+")
# Phrases never span these (a question mark, a comma, a bracket ... ends a clause).
_CLAUSE_BREAK = re.compile(r"[^\w\s'’-]+")

MAX_QUERY_TERMS = 32  # bounds the cost of pathological (pasted-document) queries

# Common English function words plus the interrogatives of natural questions. They match
# nearly every chunk, so keeping them lets BM25 reward long chatty chunks over relevant ones.
_STOP_WORDS_TEXT = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can cannot could did do does doing down during each else ever few for
from further get gets got had has have having he her here hers herself him himself his how i if
in into is it its itself just like likely me might more most much must my myself no nor not now
of off on once only or other ought our ours ourselves out over own per same shall she should so
some such than that the their theirs them themselves then there these they this those though
through to too under until up upon us very was we were what when where whether which while who
whom whose why will with would yet you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


@dataclass(frozen=True)
class QueryTerms:
    """The searchable units of a query: stemmable words and CJK n-grams, deduplicated, in order.

    `words` are lowercased Latin/other-script words (stop words removed unless nothing else is
    left); `cjk` are the CJK bigrams (or lone unigrams) of each CJK run. `all` (words + cjk)
    is what coverage counts; `phrases` only add ranking signal to the keyword query.
    """

    words: tuple[str, ...]
    cjk: tuple[str, ...]
    # Adjacent content-word pairs of the query ("support group"): matched as phrases, so a
    # chunk with the words side by side outranks one where they are scattered.
    phrases: tuple[str, ...] = ()

    @property
    def all(self) -> tuple[str, ...]:
        return self.words + self.cjk

    def __bool__(self) -> bool:
        return bool(self.words or self.cjk)


def cjk_ngrams(run: str) -> list[str]:
    """Bigrams of a CJK run, then its unigrams (the index form; also used by MMR)."""
    if len(run) == 1:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)] + list(run)


def fts_index_text(text: str) -> str:
    """The text a keyword index stores for a chunk (`ChunkRow.fts_text`): CJK runs expanded, the
    rest unchanged.

    Pure and deterministic; changing it requires a reindex (the backend's tokenizer id).
    """
    if not _CJK_CHAR.search(text):
        return text
    return CJK_RUN.sub(lambda m: " " + " ".join(cjk_ngrams(m.group())) + " ", text)


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def query_terms(query: str) -> QueryTerms:
    """Split a natural-language query into keyword-search units."""
    words: list[str] = []
    cjk: list[str] = []
    for run in CJK_RUN.findall(query):
        # Bigrams carry word identity; a single character is all a one-character run has.
        # (Phrases of adjacent bigrams hurt Chinese ranking: docs/benchmarks.md.)
        cjk.extend(cjk_ngrams(run)[: max(1, len(run) - 1)])
    latin = CJK_RUN.sub(" ", query)
    raw: list[str] = []
    keep: list[bool] = []
    phrases: list[str] = []
    for segment in _CLAUSE_BREAK.split(latin):
        seg = [w.lower() for w in _WORD.findall(segment)]
        # Apostrophes split "didn't" into "didn" + "t"; treat both halves as stop-ish noise.
        seg_keep = [w not in STOP_WORDS and not _is_contraction_tail(w) for w in seg]
        phrases.extend(f"{seg[i]} {seg[i + 1]}" for i in range(len(seg) - 1)
                       if seg_keep[i] and seg_keep[i + 1] and seg[i] != seg[i + 1])
        raw.extend(seg)
        keep.extend(seg_keep)
    content = [w for w, k in zip(raw, keep, strict=True) if k]
    words = content if (content or cjk) else raw
    phrases = _dedupe(phrases)
    # One word in two inflections is one term ("favourite coding language for fresh code"):
    # counted twice, a chunk holding "code" would hold two of the question's words.
    by_stem: dict[str, str] = {}
    for w in words:
        by_stem.setdefault(light_stem(w), w)
    words = list(by_stem.values())
    cjk = _dedupe(cjk)
    # Keep the cap fair across scripts: words first (they are usually fewer and rarer).
    words = words[:MAX_QUERY_TERMS]
    cjk = cjk[: max(0, MAX_QUERY_TERMS - len(words))]
    return QueryTerms(tuple(words), tuple(cjk), tuple(phrases[:MAX_QUERY_TERMS // 2]))


_CONTRACTION_TAILS = frozenset({"s", "t", "d", "ll", "re", "ve", "m", "didn", "doesn", "isn",
                                "wasn", "aren", "weren", "hasn", "haven", "hadn", "couldn",
                                "wouldn", "shouldn", "mustn"})


def _is_contraction_tail(word: str) -> bool:
    return word in _CONTRACTION_TAILS


def is_term(term: str) -> bool:
    """Whether `term` is a query term: letters and digits only (a phrase: such words joined by
    one space). A keyword backend can quote it safely in any query syntax."""
    return all(_WORD.fullmatch(part) for part in term.split(" "))


def word_tokens(text: str) -> list[str]:
    """Lowercased letter/digit runs outside CJK runs (for coverage and lexical boosts)."""
    return [w.lower() for w in _WORD.findall(CJK_RUN.sub(" ", text))]


def text_units(text: str) -> set[str]:
    """Lowercased words plus CJK unigrams and bigrams of a text: what a query term can hit."""
    units = set(word_tokens(text))
    for run in CJK_RUN.findall(text):
        units.update(cjk_ngrams(run))
    return units


# A crude suffix stripper: only used to decide whether a chunk *contains* a query word in
# some inflection (coverage), never for retrieval, which the keyword index's stemmer does.
_SUFFIXES = ("ational", "ization", "fulness", "iveness", "ments", "ement", "ation", "ness",
             "ment", "ings", "ing", "ies", "ied", "ers", "est", "ful", "ed", "es",
             "er", "s", "e")


# Nouns in -ion after s or t share their verb's stem, as the keyword index's Porter stemmer
# has them: "rejection" and "rejected" (reject), "promotion" and "promoted" (promot); their
# own inflections first go back to the noun ("vacationed", "questions").
_ION = re.compile(r"(?<=[st])ion$")
_ION_INFLECTED = re.compile(r"(?<=[st]ion)(?:s|ed|ing)$")


@lru_cache(maxsize=65536)
def light_stem(word: str) -> str:
    noun = _ION_INFLECTED.sub("", word)
    if len(noun) >= 7 and _ION.search(noun):
        # "-ation" keeps its own rule (information -> inform, like informed).
        return _strip_suffix(noun) if noun.endswith("ation") else noun[:-3]
    # Strip until nothing more comes off, as Porter's steps follow one another: one strip made
    # "ordered" "order" but "order" "ord", "played" "play" but "play" "pla", so a question
    # asking "what did I order" saw no word of its own in "Ordered a new keyboard", which the
    # keyword index (Porter) had found.
    stem = _strip_suffix(word)
    while stem != word:
        word, stem = stem, _strip_suffix(stem)
    return stem


def _strip_suffix(word: str) -> str:
    if word.endswith("ly") and len(word) >= 6 and word[-3] != "i":
        return word[:-2]  # "really", "lovely", "weekly"; not "family", "reply", "early"
    if word.endswith("y") and len(word) >= 3:
        # Porter's y -> i: "try", "tried", "tries" are all "tri", "city" and "cities" "citi",
        # "play" and "played" "plai", "family" and "families" "famili" (stripping the y made
        # "play" "pla" but "played" "play"; stripping "ly" made "family" "fami")
        return word[:-1] + "i"
    if _SHORT_E_VERB.match(word):  # "used", "using": "use" (as "uses"); "aged": "age"
        return word[:2] + "e"
    for suffix in _SUFFIXES:
        # A word ending in "ss" is not a plural (Porter's step 1a): "pass" must keep its stem
        # "pass", or it would never match "passed", "passes" or "passing".
        if suffix == "s" and word.endswith("ss"):
            continue
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            stem = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                return stem + "i"  # cities, cried (see y -> i above)
            # running → runn → run, as the Porter stemmer does for a consonant doubled before
            # a suffix (not "cliffs" → "clif", nor "stuffed" → "stuf": no f is doubled so)
            if (suffix in _DOUBLING and len(stem) >= 4 and stem[-1] == stem[-2]
                    and stem[-1] not in "aeioulszf"):
                stem = stem[:-1]
            return stem
    return word


_DOUBLING = frozenset({"ing", "ings", "ed", "er", "ers", "est"})
# A verb of a vowel, a consonant and a silent e, inflected: the suffix rules keep three letters
_SHORT_E_VERB = re.compile(r"^[aeiou][b-df-hj-np-tv-z](?:ed|ing|ings)$")


def covered_terms(terms: QueryTerms, text: str) -> set[str]:
    """Which query terms occur in `text` (words up to inflection, CJK n-grams exactly).

    A word is covered when some word of the text (a run of \\w, CJK runs apart) has its light
    stem, or that of another form of its verb ("won" covers "win": text/inflections.py).
    light_stem(v) is a prefix of v (but for a final i that was a y, or the e of "used"), so
    only the text's words that start with that stem are looked at (`_holds`): a substring
    search per query word, not a tokenisation of the whole chunk (this runs for every
    candidate of every search)."""
    hits = {g for g in terms.cjk if g in text}
    if terms.words:
        lowered = text.lower()
        if not lowered.isascii() and _CJK_CHAR.search(lowered):
            lowered = CJK_RUN.sub(" ", lowered)
        for word in terms.words:
            if any(_holds(lowered, light_stem(form)) for form in (word, *other_forms(word))):
                hits.add(word)
    return hits


def _holds(lowered: str, stem: str) -> bool:
    """Whether a word of `lowered` has the light stem `stem` (a stem is a prefix of its words
    but for a final i that was a y, "citi" of "city", or an e, "use" of "using")."""
    prefix = stem[:-1] if stem.endswith(("i", "e")) else stem
    return any(light_stem(v) == stem for v in _words_starting(lowered, prefix))


@lru_cache(maxsize=4096)
def _prefix_pattern(prefix: str) -> re.Pattern[str]:
    # No \b in front: it would cost the literal-prefix search its speed (~20x); the start of
    # the word is checked by _words_starting instead.
    return re.compile(re.escape(prefix) + r"\w*")


def _words_starting(lowered: str, prefix: str) -> Iterator[str]:
    """The words of `lowered` (maximal runs of \\w) that start with `prefix`."""
    for m in _prefix_pattern(prefix).finditer(lowered):
        at = m.start()
        if at == 0 or not (lowered[at - 1].isalnum() or lowered[at - 1] == "_"):
            yield m.group()
