"""The notes of a date range, for a query that names one (`search/dates/query.py`): which
chunks are of the range, how they are fetched, and what the range does to their scores.

A chunk is of the range when
- its file is a dated note, `memory/…/YYYY-MM-DD*.md` (daily notes, and the
  `YYYY-MM-DD-slug.md` files of OpenClaw's session-memory hook), dated in the range; or
- it holds a Markdown heading with an ISO date in the range ("## 2026-07-03 standup", as
  MEMORY.md-like files are often kept). Only the candidates the search already has are read
  for headings: finding every such heading would mean reading every chunk.
- it is a session transcript's chunk holding a message written in the range, or a chunk of
  MEMORY.md (cut fact by fact, `index/blocks.py`) inside a section whose heading names a day of
  the range: the index keeps neither, so the caller reads them from the files
  (`index/line_days.py`) into `DateQuery.line_days` (line -> day).

What the range does (after fusion and decay, before ordering and the threshold):
- a query ABOUT the date ("what happened on May 8th"): the range's chunks are the answer,
  whatever their words, so they are fetched from the store by path (not hoped for among the
  candidates) and rank first: score 0.5 + 0.5 × own score (0.5..1), every other chunk
  0.5 × own score (0..0.5; a note of another day is at best half an answer to "what happened
  on that day"). Both keep their order among themselves, and a day with no note leaves only
  halved scores, which the threshold may rightly turn into "nothing found".
- a query naming a topic too ("what did we decide about the database last week"): the range's
  chunks are fetched as well and join the fusion with their real scores on both legs, and they
  rank first, ordered by how well they answer the rest of the question; every other chunk's
  score is halved, as above. A question naming a time asks what happened then: a note of
  another time is at best a mention of it (docs/benchmarks.md, 2026-12-02). Its gate is not
  halved (rule "after"): such a note answers the question's words, and min_score alone says
  whether it shows, after the range (halving its gate as well would hide such notes at the
  defaults: docs/benchmarks.md, 2026-12-02 (late)). What the date does not do is make an
  answer: the range's chunks show evidence (`dated_evidence`) of their own words and meaning,
  × TOPIC_BOOST, so a question nothing answers ("what did the dentist say last week") still
  finds nothing. Only a range chunk that names the whole topic (`holds_topic`: "database" and
  "decided" in last week's note) counts as the answer outright ("first", evidence 1).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from openmemd.search.dates.query import DateQuery, DateRange
from openmemd.search.keyword import keyword_scores_for
from openmemd.search.results import LegHit
from openmemd.store.base import CandidateFilter, MeasuredChunk, StoreReader, chunks_of_files
from openmemd.text.headings import calendar_day, heading_days
from openmemd.text.tokens import QueryTerms, covered_terms

TOPIC_BOOST = 1.25
ABOUT_FLOOR = 0.5  # a range chunk of a date query scores at least this; others at most this
MAX_PATTERNS = 64  # store patterns per search; past that, whole years (filtered here)
# Years back a date said without its year may move to find notes (as far as "July 3rd" reaches
# back for a Feb 29th: dates.arithmetic.latest_not_after).
MAX_YEARS_BACK = 4
# How far from days no note is from a note may lie and still be where they are told (after)
# or planned (before): a week, the span a diary or a chat's next session tells back over.
NEARBY_DAYS = 7
MAX_LINE_DAY_CHUNKS = 4096  # chunks of files with lines in the range, read to find those lines

_NOTE = re.compile(r"(?:^|/)memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})(?:[^/\d][^/]*)?\.md$")


def note_date(path: str) -> dt.date | None:
    """The date of a dated note's file name; None for any other file."""
    m = _NOTE.search(path.replace("\\", "/"))
    return None if m is None else calendar_day(*m.groups())


def day_in_range(path: str, text: str, dates: DateQuery, lines: tuple[int, int] = (0, 0)
                 ) -> dt.date | None:
    """The day of the range this chunk (of `lines`) is of: its note's date, the first day of
    the range among its lines (a transcript's messages, a long-term file's dated sections),
    else a dated heading inside it."""
    day = note_date(path)
    if day is not None:
        return day if dates.covers(day) else None
    held = _days_within(dates.line_days.get(path, {}), *lines)
    if held:
        return min(held)
    if "#" in text:
        for day in heading_days(text):
            if dates.covers(day):
                return day
    return None


def _days_within(days: Mapping[int, dt.date], first: int, last: int) -> list[dt.date]:
    """The days of lines first..last, looked up by whichever is fewer, the lines or the days
    (`fetch_dated` asks this of every chunk of a transcript that may hold thousands of both)."""
    if last - first < len(days):
        return [days[n] for n in range(first, last + 1) if n in days]
    return [d for n, d in days.items() if first <= n <= last]


def path_patterns(dates: DateQuery) -> list[str]:
    """`StoreReader.chunks_by_path` patterns for the range's dated notes: a whole year or
    month as one pattern, other days one each (`note_date` filters what they over-match)."""
    keys: list[str] = []
    for r in dates.ranges:
        day = r.start
        while day <= r.end and len(keys) <= MAX_PATTERNS:
            year_end, month_end = dt.date(day.year, 12, 31), _month_end(day)
            if day.month == 1 and day.day == 1 and year_end <= r.end:
                keys.append(f"{day.year}-")
                day = year_end
            elif day.day == 1 and month_end <= r.end:
                keys.append(f"{day:%Y-%m}-")
                day = month_end
            else:
                keys.append(f"{day:%Y-%m-%d}")
            day += dt.timedelta(days=1)
    if len(keys) > MAX_PATTERNS:
        keys = [f"{year}-" for year in range(dates.start.year, dates.end.year + 1)]
    return [f"*memory/*{key}*.md" for key in dict.fromkeys(keys)][:MAX_PATTERNS]


def _month_end(day: dt.date) -> dt.date:
    first_next = (day.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return first_next - dt.timedelta(days=1)


def latest_with_notes(reader: StoreReader, dates: DateQuery, *,
                      where: CandidateFilter) -> DateQuery:
    """`dates`, or when its range holds no dated note and a date was said without its year,
    the latest earlier year whose range does ("in May", asked in December of a memory whose
    notes stop in 2023, means May 2023: a year-less date is the latest one the notes are
    about, as it is the latest one not after today)."""
    tried = dates
    for _ in range(MAX_YEARS_BACK + 1):
        if _has_notes(reader, tried, where):
            return tried
        earlier = tried.a_year_earlier()
        if earlier is None:
            break
        tried = earlier
    return dates


def _has_notes(reader: StoreReader, dates: DateQuery, where: CandidateFilter) -> bool:
    return bool(_dated_notes(reader, dates, limit=MAX_PATTERNS, where=where))


def _dated_notes(reader: StoreReader, dates: DateQuery, *, limit: int,
                 where: CandidateFilter) -> list[MeasuredChunk]:
    """The chunks of the range's dated notes, newest first."""
    return [c for c in reader.chunks_by_path(path_patterns(dates), limit=limit, where=where)
            if (day := note_date(c.path)) is not None and dates.covers(day)]


def notes_around(reader: StoreReader, dates: DateQuery, *,
                 where: CandidateFilter) -> tuple[str | None, str | None] | None:
    """For a range that holds no note (no dated note, no dated line): the dated notes nearest
    it, the latest before and the earliest after (None where there is none), so a reply to
    "what did I do yesterday" can say where the notes are rather than name a note of some
    other day by its meaning; None when the range holds something."""
    if dates.line_days or _has_notes(reader, dates, where):
        return None
    return nearest_notes(_paths(reader, where), dates)


def _paths(reader: StoreReader, where: CandidateFilter) -> list[str]:
    wanted = where.sources
    return [f.path for f in reader.stored_files().values()
            if wanted is None or f.source in wanted]


@dataclass(frozen=True)
class ToldNearby:
    """The days a query names (in the year found), the dated notes nearest them, and those of
    the notes near enough to be searched as the range (`told_nearby`)."""

    dates: DateQuery
    around: tuple[str | None, str | None]
    near: DateQuery


def told_nearby(reader: StoreReader, dates: DateQuery, around: tuple[str | None, str | None],
                *, where: CandidateFilter) -> ToldNearby | None:
    """For a topic asked of days no note is from, the nearest dated notes (`around`, from
    `notes_around`) that lie within NEARBY_DAYS of them, as the query's range: what happened on
    a day with no note is told in the next one ("Who did Maria have dinner with on May 3": "last
    night I had dinner with my mom", written May 4th), and was often planned in the one before.
    A date said without its year is the latest such year with notes that near ("when they met
    on Aug 15th"; only then are the stored files listed again). None when no note is that near:
    the query is then searched as if it named no date."""
    tried, paths = dates, None
    for _ in range(MAX_YEARS_BACK + 1):
        near = _nearby(tried, around)
        if near is not None:
            return ToldNearby(tried, around, near)
        earlier = tried.a_year_earlier()
        if earlier is None:
            return None
        paths = _paths(reader, where) if paths is None else paths
        tried, around = earlier, nearest_notes(paths, earlier)
    return None


def _nearby(dates: DateQuery, around: tuple[str | None, str | None]) -> DateQuery | None:
    days = sorted({day for path in around if path is not None
                   and (day := note_date(path)) is not None
                   and (dates.start - day).days <= NEARBY_DAYS
                   and (day - dates.end).days <= NEARBY_DAYS})
    if not days:
        return None
    text = " / ".join(r.text for r in dates.ranges)
    return dataclasses.replace(dates, ranges=tuple(DateRange(d, d, f"near {text}") for d in days))


def nearest_notes(paths: Iterable[str], dates: DateQuery) -> tuple[str | None, str | None]:
    """Of `paths`, the dated note latest before the range and the one earliest after it."""
    before: tuple[dt.date, str] | None = None
    after: tuple[dt.date, str] | None = None
    for path in paths:
        day = note_date(path)
        if day is None or dates.covers(day):
            continue
        if day < dates.start and (before is None or (day, path) > before):
            before = (day, path)
        elif day > dates.end and (after is None or (day, path) < after):
            after = (day, path)
    return (before[1] if before else None), (after[1] if after else None)


def fetch_dated(reader: StoreReader, dates: DateQuery, *, limit: int,
                where: CandidateFilter) -> list[LegHit]:
    """The range's dated-note chunks (newest first), then the chunks of the range's lines in
    transcripts and long-term files, straight from the store."""
    found = _dated_notes(reader, dates, limit=limit, where=where)
    # the store keeps to `where` (a search of memory only skips transcripts)
    chunks = chunks_of_files(reader, dates.line_days, limit=MAX_LINE_DAY_CHUNKS, where=where)
    found += [c for c in chunks if day_in_range(c.path, "", dates,
                                                (c.start_line, c.end_line))][:limit]
    return [LegHit.unscored(c) for c in found]


# Words that name the memory itself. Every note is one, so in a date question they are no sign
# of an answer: "what did I write in my notes on May 3" is not about notes. Verbs of writing
# stay: "what did Joanna write yesterday" asks for what she wrote.
MEMORY_WORDS = frozenset({"note", "notes", "memory", "memories"})


def without_memory_words(terms: QueryTerms) -> QueryTerms:
    """A date question's terms as its keyword match may use them: no `MEMORY_WORDS`."""
    words = tuple(w for w in terms.words if w not in MEMORY_WORDS)
    phrases = tuple(p for p in terms.phrases if MEMORY_WORDS.isdisjoint(p.split()))
    return QueryTerms(words, terms.cjk, phrases)


def keyword_scored(reader: StoreReader, terms: QueryTerms, hits: list[LegHit],
                   joining: list[LegHit]) -> list[LegHit]:
    """The joining chunks (a date's notes, a copy's note) the keyword leg did not return, with
    their keyword scores (for a keyword-only search; the hybrid one fills both legs' scores
    for any candidate)."""
    have = {h.id for h in hits}
    extra = [h for h in joining if h.id not in have]
    top = max((h.relevance for h in hits), default=0.0)
    scores = keyword_scores_for(reader, terms, extra, top_relevance=top)
    return [dataclasses.replace(h, score=scores[h.id][0], raw=scores[h.id][1],
                                coverage=scores[h.id][2]) if h.id in scores else h
            for h in extra]


def holds_topic(text: str, dates: DateQuery) -> bool:
    """Whether a chunk names what the query asks about besides its date: every topic word (up
    to inflection), and at least half of the topic's CJK bigrams (a bigram straddling two words,
    "于数" of 关于数据库, is absent from the best of notes)."""
    topic = dates.topic
    found = covered_terms(topic, text)
    return (all(w in found for w in topic.words)
            and 2 * sum(1 for g in topic.cjk if g in found) >= len(topic.cjk))


class Scored(Protocol):
    """A candidate as the pipeline holds it: where it is, what it says, its scores."""

    path: str
    start_line: int
    end_line: int
    text: str
    score: float
    gate: float
    evidence: float
    date: dict[str, Any] | None


def judge_dates(candidates: Sequence[Scored], dates: DateQuery | None) -> None:
    """Note what the query's dates make of each candidate (`explain`'s "date": whether it is
    of the range, its day, the rule `apply_dates` applies)."""
    if dates is None:
        return
    judged = [(day_in_range(c.path, c.text, dates, (c.start_line, c.end_line)), c)
              for c in candidates]
    first = {id(c) for day, c in judged if day is not None
             and (dates.about_date or holds_topic(c.text, dates))}
    # The range holds the answer: everything else is at best half of one.
    halve = any(day is not None for day, _ in judged) or dates.about_date
    for day, c in judged:
        if id(c) in first:
            rule = "first"
        elif day is not None:
            rule = "range"
        else:
            rule = ("halved" if dates.about_date else "after") if halve else "kept"
        c.date = {"inRange": day is not None, "day": day.isoformat() if day else None,
                  "rule": rule}


# A move (floor, factor): value = floor + factor * value.
_UP, _HALVED, _KEPT = (ABOUT_FLOOR, 1 - ABOUT_FLOOR), (0.0, ABOUT_FLOOR), (0.0, 1.0)
# rule -> (the score's move, the gate's move)
_MOVES = {"first": (_UP, _UP), "range": (_UP, _UP), "halved": (_HALVED, _HALVED),
          "after": (_HALVED, _KEPT), "kept": (_KEPT, _KEPT)}


def apply_dates(candidates: Sequence[Scored]) -> None:
    """Move each candidate's score and gate by the rule `judge_dates` noted (see above)."""
    for c in candidates:
        if c.date is None:
            continue
        (floor, factor), (gate_floor, gate_factor) = _MOVES[c.date["rule"]]
        c.score = min(1.0, floor + factor * c.score)
        c.gate = min(1.0, gate_floor + gate_factor * c.gate)


def dated_evidence(candidates: Sequence[Scored]) -> None:
    """The date is part of the question, so a note of its range is evidence by that much too:
    a query about a day is answered by that day's notes whatever their words (the date words
    were taken out of what the legs search), one naming the whole topic is what was asked for,
    and any other note of the range shows its own evidence x TOPIC_BOOST (ranked first by the
    date, it still answers only what its words and meaning answer)."""
    for c in candidates:
        if c.date is None or not c.date.get("inRange"):
            continue
        if c.date.get("rule") == "first":
            c.evidence = max(c.evidence, 1.0)
        elif c.date.get("rule") == "range":
            c.evidence = min(1.0, c.evidence * TOPIC_BOOST)
