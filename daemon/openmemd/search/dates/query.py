"""What a query says about dates: the day, month or range it names, and whether that is all.

    understand_dates(query, today) -> DateQuery | None

"what did I do on July 3rd", "notes from 3 July 2026", "3/27/2023", "2023年3月27日", "上周",
"three days ago", "last Friday" ... each resolves to a range of days against `today` (the
local date; see `search/dates/forms.py` for every form and its conventions). The `DateQuery`
holds the ranges, the query with its date words taken out (so "July" and "3rd" are not
keyword noise and do not pull the query's vector towards other dates), and `about_date`:
whether the query asks for the date itself ("what happened on May 8th", "notes from last
week", "3月27号聊了什么": nothing else named) or names a topic too ("what did we decide about
the database last week"). The search pipeline ranks the notes of the range first for the
former and boosts them for the latter (`search/dated.py`).

Pure and cheap for a query without dates: a pre-check (a digit, a month or weekday name, a
relative word, 年/月/日/周/天...) turns most queries away before any pattern runs, and the date
library (`dateparser`) is imported only when a phrase of English date words is found.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from openmemd.search.dates.arithmetic import WEEKDAY_WORD
from openmemd.search.dates.forms import MAX_READINGS, Span, find_spans
from openmemd.search.dates.offsets import counted_from_named
from openmemd.search.dates.spans import (
    beside_named,
    bracketed,
    joined,
    since,
    weeks,
    with_parts,
    with_year,
)
from openmemd.text.tokens import CJK_RUN, STOP_WORDS, QueryTerms, cjk_ngrams, word_tokens

# Could this query name a date at all? Anything a form in forms.py needs at least one of.
_MAYBE = re.compile(
    r"\d|[年月日号號周週天昨今季]|星期|礼拜|禮拜|节|節|元旦|平安夜|圣诞|国庆|除夕|元宵|端午|七夕|中秋|清明|冬至|五一|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun"
    r"|today|tonight|yesterday|yday|yest|ago|back|last|this|past|previous|current|week|wk"
    r"|quarter|month|mos|mth|year|yr|fortnight|hour|hr|christmas|xmas|nye|valentine|halloween"
    r"|easter|good friday"
    r"|thanksgiving|boxing|spring|summer|autumn|fall|winter|other\s+(?:day|night)|mother|father"
    r"|memorial|labou?r|independence|festival"
    r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    # a day of the month in words ("on the third", "on the twenty-first")
    r"|first|second|third|fifth|ninth|twelfth|twent|thirt)", re.IGNORECASE)
_CJK = re.compile(CJK_RUN.pattern)
# Words a span takes along when it goes: the preposition before it, "the".
_LEAD = re.compile(r"(?:\b(?:on|in|from|of|for|at|during|since|around|towards?|between|the)\s+|"
                   r"[在于於从從自])\s*$", re.IGNORECASE)
_TRAIL_CJK = re.compile(r"\s*(?:的|那天|当天|當天|那周|那个月)")
# What ties a relative phrase to the named day after it.
_ANCHORED = re.compile(r"^[\s,]*(?:as\s+(?:mentioned|said|noted|written)\s+)?(?:on|before|after"
                       r"|as\s+of|prior\s+to)\s*$", re.IGNORECASE)
# A time of day said with a date ("1:56 pm on 8 May, 2023", "2023-05-08T13:56") asks for that
# day's notes: notes are by day, and the time is no topic.
_CLOCK = re.compile(r"(?<![\w:])T?\d{1,2}(?::\d\d){1,2}(?:\s*[ap]\.?m\b\.?)?(?![\w:])"
                    r"|\b\d{1,2}\s*[ap]\.?m\b\.?", re.IGNORECASE)
_WEEKDAY_ALONE = re.compile(WEEKDAY_WORD, re.IGNORECASE)
# A query ASKS FOR its date when nothing but these words is left beside it: words for a
# day's record or for "what went on". Topic words (a name, "database", 会议) make it a topic
# query whose date only narrows it.
_FILLER = frozenset((
    "happen", "happened", "happening", "happens", "occur", "occurred", "going", "go", "went",
    "come", "came", "coming", "take", "took", "place", "get", "got", "make", "made", "see",
    "saw", "look", "like", "activity", "activities", "within",
    "on", "up", "new", "note", "notes", "noted", "conversation", "conversations", "convo", "chat",
    "chats", "chatted", "talk", "talked", "talking", "discuss", "discussed", "discussion",
    "discussions", "say", "said", "tell", "told", "write", "wrote", "written", "log", "logs",
    "logged", "diary", "journal", "entry", "entries", "record", "records", "recorded", "memory",
    "memories", "remember", "summary", "summarize", "summarise", "summarised", "recap",
    "overview", "show", "give", "list", "find", "remind", "me", "do", "did", "done", "doing",
    "anything", "something", "everything", "things", "thing", "stuff", "day", "days", "date",
    "whats", "what's", "whatever", "all", "kind", "sort", "earlier", "later",
    "event", "events", "happenings", "dated", "session", "sessions", "held", "topic",
    "topics", "subject", "subjects", "cover", "covered", "mention", "mentioned", "brought",
    "please", "pls", "plz", "thanks", "thank",  # politeness names no topic
    "morning", "afternoon", "evening", "night"))  # nor does a time of day: notes are by day
_CJK_FILLER = re.compile(
    r"我们|我們|咱们|大家|什么|什麼|哪些|有没有|有沒有|发生|發生|讨论|討論|聊天|聊|谈|談|说|說|"
    r"做|干|幹|记录|記錄|笔记|筆記|日记|日記|事情|事|内容|內容|对话|對話|会话|會話|情况|情況|"
    r"了|的|我|你|他|她|有|都|呢|吗|嗎|啊|吧|啥|在|过|過|些|那|这|這|时候|時候|一下|看看|总结|總結|"
    r"请|請|麻烦|麻煩|谢谢|謝謝|告诉|告訴|假期|长假|放假|"
    r"上午|下午|中午|早上|晚上|傍晚|凌晨|夜里|夜裡")  # a time of day: notes are by day


@dataclass(frozen=True)
class DateRange:
    """Days `start`..`end` (inclusive), named by `text` in the query; `year_given` False for a
    date said without its year ("in May", "July 3rd"), placed in the latest such year."""

    start: dt.date
    end: dt.date
    text: str
    year_given: bool = True

    def a_year_earlier(self) -> DateRange:
        return DateRange(with_year(self.start, self.start.year - 1),
                         with_year(self.end, self.end.year - 1), self.text, False)

    def to_dict(self) -> dict[str, str]:
        return {"from": self.start.isoformat(), "to": self.end.isoformat(), "text": self.text}


@dataclass(frozen=True)
class DateQuery:
    """A query's dates: `ranges` (in query order), `query` (the query without its date words,
    what the search legs look for) and `topic` (the words naming what else is asked for;
    none: the query is about the date itself). `line_days`: for each file with lines of the
    range the index cannot date by itself (a transcript's messages by their JSONL line, a
    long-term file's dated sections), each such line's day (filled in by the caller, who can
    read files: `index/line_days.py`). `read_until`: where reading dates stopped in a query
    holding more than `forms.MAX_READINGS` of them (the rest is searched as words), None when
    all of it was read."""

    ranges: tuple[DateRange, ...]
    query: str
    topic: QueryTerms = QueryTerms((), ())
    line_days: Mapping[str, Mapping[int, dt.date]] = field(default_factory=dict)
    read_until: int | None = field(default=None, repr=False)  # the reply says it, `to_meta`

    @property
    def about_date(self) -> bool:
        return not self.topic

    def a_year_earlier(self) -> DateQuery | None:
        """The same query with its dates said without a year moved a year back ("in May" of
        last year); None when every date has its year (or counts from today)."""
        if all(r.year_given for r in self.ranges):
            return None
        return dataclasses.replace(self, ranges=tuple(
            r if r.year_given else r.a_year_earlier() for r in self.ranges))

    def covers(self, day: dt.date) -> bool:
        return any(r.start <= day <= r.end for r in self.ranges)

    @property
    def start(self) -> dt.date:
        return min(r.start for r in self.ranges)

    @property
    def end(self) -> dt.date:
        return max(r.end for r in self.ranges)

    def to_meta(self) -> dict[str, Any]:
        """The reply's `dates`: what was understood ({"from", "to", "text", "about"}, and
        "ranges" when the query named more than one)."""
        meta: dict[str, Any] = {"from": self.start.isoformat(), "to": self.end.isoformat(),
                                "text": " / ".join(r.text for r in self.ranges),
                                "about": "date" if self.about_date else "topic"}
        if len(self.ranges) > 1:
            meta["ranges"] = [r.to_dict() for r in self.ranges]
        if self.read_until is not None:
            meta["note"] = (f"dates read in the query's first {self.read_until} characters only"
                            f" (its first {MAX_READINGS} date-like matches); the rest is searched"
                            " as words")
        return meta


def understand_dates(query: str, today: dt.date, *, southern: bool = False) -> DateQuery | None:
    """The dates `query` names, resolved against `today` (`southern`: the user's seasons are
    the southern hemisphere's); None when it names none."""
    if not query or not _MAYBE.search(query):
        return None
    found = find_spans(query, today, southern=southern)
    spans = beside_named(query, _choose(found.spans))
    if not spans:
        return None
    anchor = _anchor(query, spans)
    if anchor is not None:  # "last Friday before 23 January 2022": that Friday, not today's
        spans = _choose(find_spans(query, anchor, southern=southern).spans)
    spans = counted_from_named(query, joined(query, with_parts(query, spans, today),
                                             anchor or today), today)
    spans = bracketed(query, weeks(query, since(query, spans, today)))
    rest = _remove(query, spans)
    topic = _topic_of(rest)
    if topic and any(s.topical for s in spans):  # "what tradition ... during Thanksgiving"
        spans = [s for s in spans if not s.topical]
        rest = _remove(query, spans)
        topic = _topic_of(rest)
    if not spans:
        return None
    ranges = tuple(DateRange(s.first, s.last, query[s.start:s.end].strip(), s.year_given)
                   for s in _with_named_days(spans, topic))
    return DateQuery(ranges, rest, topic,
                     read_until=found.until if found.until < len(query) else None)


def _with_named_days(spans: list[Span], topic: QueryTerms) -> list[Span]:
    """`spans`, and with a topic asked, the day each counted phrase counts from after it ("the
    puppy she got two weeks before August 11, 2023" was told on August 11th)."""
    if not topic:
        return spans
    return [t for s in spans for t in ((s, s.counted_from) if s.counted_from else (s,))]


def _anchor(query: str, spans: list[Span]) -> dt.date | None:
    """The named day a relative phrase counts from when the query ties it to one ("the Sunday
    before October 25, 2022", "last week, as mentioned on November 6, 2023"); else None."""
    for a, b in itertools.pairwise(spans):
        if (a.relative and not b.relative and b.year_given
                and _ANCHORED.match(query[a.end:b.start])):
            return b.first  # ("last year on May 8": May 8 of last year, `joined`)
    return None


def _choose(spans: list[Span]) -> list[Span]:
    """The longest spans that do not overlap, in query order ("Monday, May 8th 2023" over
    "Monday" and "May 8th")."""
    chosen: list[Span] = []  # by start; apart, so by end too: a span's neighbours tell
    for span in sorted(spans, key=lambda s: (s.start - s.end, s.start)):
        # the chosen spans starting before this one ends: the last of them ends latest
        at = bisect.bisect_left(chosen, span.end, key=lambda c: c.start)
        if at == 0 or chosen[at - 1].end <= span.start:
            bisect.insort(chosen, span, key=lambda c: (c.start, c.end))
    return chosen


def _remove(query: str, spans: list[Span]) -> str:
    """The query without its date phrases and the words that only led to them."""
    parts: list[str] = []
    at = 0
    for span in spans:
        before = query[at:span.start]
        lead = _LEAD.search(before)
        parts.append(before[:lead.start()] if lead else before)
        at = span.end
        trail = _TRAIL_CJK.match(query, at)
        if trail:
            at = trail.end()
    parts.append(query[at:])
    words: list[str] = []
    for part in (p.strip() for p in parts):
        if part:  # no space where a date stood between two CJK words (我昨天做了 → 我做了)
            if words and not (_CJK.match(words[-1][-1]) and _CJK.match(part)):
                words.append(" ")
            words.append(part)
    # the brackets a date stood in: "notes ( )"
    text = re.sub(r"\(\s*\)|（\s*）", " ", "".join(words))
    for opening, closing in ("()", "（）"):  # a bracket whose date went: "anything )?"
        if text.count(opening) != text.count(closing):
            text = text.replace(opening, " ").replace(closing, " ")
    text = re.sub(r"\s+([,.?!;:，。？！；：])", r"\1", text)
    text = re.sub(r"^[\s,.;:，。；：-]+|[\s,;:，；：-]+$", "", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def _topic_of(rest: str) -> QueryTerms:
    """What the query, its dates removed, still names (besides filler, a clock time and a
    weekday the date already fixes): its words and the CJK bigrams of what is left of its CJK
    runs."""
    words = [w for w in dict.fromkeys(word_tokens(_CLOCK.sub(" ", rest)))
             if len(w) > 1 and w not in STOP_WORDS and w not in _FILLER
             and not w.isdigit() and w.rstrip("s") not in _FILLER
             and not _WEEKDAY_ALONE.fullmatch(w)]
    cjk = [gram for run in CJK_RUN.findall(rest) for part in _CJK_FILLER.split(run) if part
           for gram in (cjk_ngrams(part)[: max(1, len(part) - 1)])]
    return QueryTerms(tuple(words), tuple(dict.fromkeys(cjk)))
