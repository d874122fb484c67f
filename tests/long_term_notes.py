"""A realistic curated workspace: a MEMORY.md of ~45 mixed facts (sections, two promoted entries)
and 40 daily notes full of related words (code, languages, new projects, coffee, tea), for the
search of one fact among many (tests/search/test_long_term_units.py, on SQLite and PostgreSQL);
and a note with its promoted copy in MEMORY.md, for the search that shows the fact once
(tests/search/test_promoted_once.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from openmemd.api import MemoryIndex

MEMORY = """# Long-Term Memory

## About the user

- Name: Sam Rivera, lives in Porto, works remotely for a logistics startup.
- Partner: Alex; they have a cat called Miso and a dog called Pepper.
- Birthday is on 14 February; prefers small dinners over parties.
- Allergic to peanuts; carries an epinephrine pen when travelling.
- Drinks dark roast coffee with oat milk every morning, no sugar.
- Runs 5 km three times a week, usually along the river before work.
- Speaks Portuguese, English and some Spanish; is learning Japanese on Duolingo.
- Favourite book is The Left Hand of Darkness; reads mostly science fiction.
- Likes to be addressed informally and hates long email threads.

## Work

- Team lead of the platform team (4 engineers: Ana, Priya, Tom, Wei).
- The user prefers TypeScript to JavaScript for new projects.
- The billing service is written in Go and runs on Kubernetes in eu-west-1.
- Code reviews happen in the afternoon; the user blocks 14:00-16:00 for them.
- On-call rotation is weekly, handover on Monday at 10:00.
- Deploys are frozen on Fridays after 15:00.
- The main database is PostgreSQL 16; read replicas in two zones.
- Uses Neovim with the LazyVim config; the terminal is WezTerm.
- Prefers squash merges and conventional commit messages.
- Writes design docs in Markdown and keeps them in the docs/ folder of each repo.
- The staging cluster is shared with the data team; ask Wei before resizing it.
- Quarterly planning is in the first week of January, April, July and October.
- The user dislikes meetings before 10:00 and keeps Wednesday afternoons meeting-free.

## Preferences

- Prefers window seats on flights and always books TAP when possible.
- Likes spicy food, especially Sichuan; avoids cilantro.
- Tea in the afternoon: green tea or genmaicha.
- Wants reminders one day ahead, never on the same morning.
- Likes notes short: bullet points, no long paragraphs.
- Music while working: lo-fi or film scores, never lyrics.

## Health

- Dentist: Dr. Costa, every six months; next check-up in November.
- Physiotherapy for the left knee every second Thursday.
- Takes vitamin D in winter.

## Home

- The flat's lease renews in March; the landlord is Mr. Silva.
- Internet provider is MEO; the router is in the hallway cupboard.
- The plants on the balcony need water every two days in summer.
- Recycling is collected on Tuesdays and Fridays.

## Family

- Sister Inês lives in Lisbon; her kids are Rui (7) and Marta (4).
- Parents visit every December; they stay in the guest room.
- Mother's birthday is 2 June; she likes orchids.

## Promoted From Short-Term Memory (2026-06-20)

"""
PROMOTED = (
    "<!-- openclaw-memory-promotion:memory:memory/2026-06-12.md:3:3 -->\n"
    "- Ana owns the migration of the payments queue to RabbitMQ. Source: "
    "memory/2026-06-12.md#L3-L3 [score=0.861 recalls=4 avg=0.702 "
    "source=memory/2026-06-12.md:3-3]\n"
    "<!-- openclaw-memory-promotion:memory:memory/2026-06-15.md:5:5 -->\n"
    "- The VPN must be on to reach the staging dashboards. Source: "
    "memory/2026-06-15.md#L5-L5 [score=0.833 recalls=3 avg=0.688 "
    "source=memory/2026-06-15.md:5-5]\n"
)
MEMORY += PROMOTED

DAYS = [
    ("- Paired with Tom on the JavaScript bundle size; tree shaking removed 40 KB.",
     "- Lunch at the ramen place near the office."),
    ("- Reviewed Priya's pull request for the new CLI written in Rust.",
     "- The CI took 25 minutes again; need faster runners."),
    ("- Started a small side project to track running times; wrote the first script in Python.",
     "- Called the dentist to confirm November."),
    ("- Team discussion about which language to use for the new notification service: "
     "Go or Kotlin.",
     "- Wei prefers Kotlin because of coroutines."),
    ("- Migrated the old jQuery admin page to React; lots of legacy code.",
     "- Bought oat milk and coffee beans."),
    ("- Read an article about Deno and Bun as JavaScript runtimes.",
     "- Pepper had a vet appointment; all fine."),
    ("- Fixed a flaky test in the billing service; it raced the session cleanup.",
     "- Evening run, 6 km."),
    ("- Wrote a design doc for the event bus; the code samples are in Go.",
     "- Sister called about the summer holidays."),
    ("- Learned some new Japanese kanji; Duolingo streak at 120 days.",
     "- Cooked mapo tofu."),
    ("- The frontend team asked whether to adopt Svelte for the new dashboard.",
     "- Decided to wait until Q3."),
    ("- Spent the afternoon on code review; three PRs merged.",
     "- Green tea and a walk at 16:00."),
    ("- Hackathon idea: a Slack bot for on-call handovers, maybe in Python.",
     "- Tom volunteered to help."),
    ("- Debugged a memory leak in the Node.js gateway; it was an unbounded cache.",
     "- Plants watered."),
    ("- Planning the offsite in Lisbon for September with Priya.",
     "- Booked the venue."),
    ("- Wrote unit tests for the pricing module; coverage up to 85%.",
     "- Pizza night with Alex."),
    ("- Interviewed a candidate for the backend role; strong in Java and Spring.",
     "- Dinner with friends."),
    ("- Refactored the shell scripts of the deploy pipeline into a Makefile.",
     "- Rain all day."),
    ("- Ana asked about the style guide for new repositories: linting, formatting, commit hooks.",
     "- Updated the template."),
    ("- Watched a talk about WebAssembly and Rust in the browser.",
     "- Miso knocked over a plant."),
    ("- Quarterly planning prep: the roadmap for the billing service and the new gateway.",
     "- Long day."),
    ("- Tried GitHub Copilot for writing boilerplate code; mixed feelings.",
     "- 5 km run by the river."),
    ("- The data team wants a Python SDK for the events API.",
     "- Agreed to review their draft."),
    ("- Mentoring session with Wei about system design.",
     "- Bought a new keyboard."),
    ("- The gateway rewrite: discussed keeping it in Node.js or moving to Go.",
     "- No decision yet."),
    ("- Grocery list: eggs, spinach, rice noodles, green tea.",
     "- Paid the electricity bill."),
    ("- Physiotherapy for the knee; exercises twice a day.",
     "- Early night."),
    ("- Started reading a book about compilers and programming language design.",
     "- Tea with Inês."),
    ("- Set up a fresh repository for the internal tools portal; chose Vite and ESLint.",
     "- Coffee with Tom."),
    ("- Fixed the broken printer on floor two (again).",
     "- Helped Priya with her talk slides."),
    ("- Wrote a migration script for the user table; ran it on staging.",
     "- Movie night."),
    ("- Discussed coding standards for the platform team; agreed on Prettier defaults.",
     "- Sunny day."),
    ("- Rebuilt the personal website with Astro; wrote posts in MDX.",
     "- Run, 5 km."),
    ("- Sprint retro: too many context switches; fewer meetings next sprint.",
     "- Takeaway sushi."),
    ("- The mobile team chose Swift for the new iOS app and Kotlin for Android.",
     "- Long call with Alex's parents."),
    ("- Hiking in the Alps with my sister, planned for August.",
     "- Bought boots."),
    ("- Learned about Zig; interesting but too young for production code.",
     "- Fixed the bike."),
    ("- Helped the intern set up Node, pnpm and the monorepo.",
     "- Late lunch."),
    ("- Performance review notes for Tom; strong on testing.",
     "- Evening yoga."),
    ("- Investigated slow queries on PostgreSQL; added two indexes.",
     "- Dinner at Inês's."),
    ("- Decided to write the new CLI tool for log search in Go, it compiles to one binary.",
     "- Cat vaccination booked for October."),
]


def write_workspace(root: Path) -> None:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    for i, lines in enumerate(DAYS):
        day = f"2026-05-{i + 1:02d}" if i < 31 else f"2026-06-{i - 30:02d}"
        body = "\n".join(lines)
        (root / "memory" / f"{day}.md").write_text(f"# {day}\n\n{body}\n", encoding="utf-8")


def line_of(text: str) -> int:
    """The MEMORY.md line (1-based) holding `text`."""
    return next(i for i, line in enumerate(MEMORY.split("\n"), 1) if text in line)


def check_long_term_search(index: MemoryIndex, workspace: Path) -> None:
    """One fact of MEMORY.md found among the other facts and the daily notes: as its own hit,
    cited by its own line (before, a ~30-line window of facts was the hit)."""
    query = "which programming language for new projects"
    top3 = [h.citation for h in index.search(query, record=False)[:3]]
    assert f"MEMORY.md#L{line_of('TypeScript')}" in top3, top3
    # A paraphrase sharing no word with the fact, among notes sharing one word each with it
    # ("code", "language"): ranked by meaning, not by those words (7th before). Its meaning
    # does not stand out enough to pass the default min_score's evidence (evidence.py), so
    # the ranking is what is checked here.
    query = "favourite coding language for fresh code"
    top3 = [h.citation for h in index.search(query, record=False, min_score=0.0)[:3]]
    assert f"MEMORY.md#L{line_of('TypeScript')}" in top3, top3
    top = index.search("what does the user drink in the morning", record=False)[0]
    assert (top.path, top.start_line, top.end_line) == ("MEMORY.md", line_of("dark roast"),
                                                        line_of("dark roast"))
    # The first fact of a section carries its heading; the citation names the fact.
    top = index.search("who is the landlord", record=False)[0]
    assert (top.start_line, top.citation) == (line_of("## Home"),
                                              f"MEMORY.md#L{line_of('landlord')}")
    # A promoted entry with its marker and Source line is one unit.
    top = index.search("who owns the payments queue migration", record=False)[0]
    entry = line_of("Ana owns the migration")
    assert top.path == "MEMORY.md" and top.start_line <= entry == top.end_line
    # A fact added to a section re-embeds that fact only: every other block keeps its text
    # (though its lines moved), so its vector comes from the embedding cache.
    text = MEMORY.replace("## Preferences\n", "- Reviews Rust code on Fridays.\n\n## Preferences\n")
    (workspace / "MEMORY.md").write_text(text, encoding="utf-8")
    report = index.sync()
    assert report.vectors_embedded == 1, report


# A note and MEMORY.md holding a promoted copy of its line 3, beside a line the user wrote.
COPY_NOTE = ("# 2026-06-12\n\n- Ana owns the migration of the payments queue to RabbitMQ.\n"
             "- Ramen.\n")
COPY_ENTRY = ("<!-- openclaw-memory-promotion:memory:memory/2026-06-12.md:3:3 -->\n"
              "- Ana owns the migration of the payments queue to RabbitMQ. Source: "
              "memory/2026-06-12.md#L3-L3 [score=0.861 recalls=4 avg=0.702 "
              "source=memory/2026-06-12.md:3-3]\n")
COPY_MEMORY = ("# Long-Term Memory\n\n- Ana reads the RabbitMQ payments queue dashboards daily.\n\n"
               "## Promoted From Short-Term Memory (2026-06-20)\n\n" + COPY_ENTRY)
COPY_QUERY = "Ana payments queue migration RabbitMQ"


def check_copy_left_out(workspace: Path, open_index: Callable[[], MemoryIndex]) -> None:
    """A promoted entry is not shown beside the note it copies (search/promoted.py)."""
    (workspace / "memory" / "2026-06-12.md").write_text(COPY_NOTE, encoding="utf-8")
    (workspace / "MEMORY.md").write_text(COPY_MEMORY, encoding="utf-8")
    with open_index() as index:
        index.sync()
        hits = index.search(COPY_QUERY, max_results=2, min_score=0.0, record=False)
        # The note and the line the user wrote; the copy of the note's line 3 is left out.
        assert [(h.path, h.start_line) for h in hits] == [("memory/2026-06-12.md", 1),
                                                          ("MEMORY.md", 1)], hits
        # Without the note, the entry is the only copy of the fact: it is shown.
        (workspace / "memory" / "2026-06-12.md").unlink()
        index.sync()
        hits = index.search(COPY_QUERY, min_score=0.0, record=False)
        assert any(h.path == "MEMORY.md" and h.end_line == COPY_MEMORY.count("\n") for h in hits)


# The same note's line 3 inside a long day: its chunk holds two dozen other lines, so on its
# own the short copy would outrank it (BM25 and e5 both favour short texts).
LONG_COPY_NOTE = COPY_NOTE.replace("- Ramen.\n", "".join(
    f"- {thing} on the list for the weekend, with the usual errands.\n"
    for thing in ("Groceries", "Laundry", "Bike repair", "Library books", "Plants", "Post office",
                  "Pharmacy", "Bakery", "Hardware store", "Dry cleaning", "Car wash", "Gym bag",
                  "Birthday card", "Train tickets", "Recycling", "Window cleaning",
                  "Shoe repair", "Bank", "Florist", "Tailor")))


def check_copy_ranks_after_note(workspace: Path, open_index: Callable[[], MemoryIndex]) -> None:
    """A promoted entry ranks no higher than the note it copies (search/promoted.py), even when
    the note's chunk is long and would rank below the short copy."""
    (workspace / "memory" / "2026-06-12.md").write_text(LONG_COPY_NOTE, encoding="utf-8")
    (workspace / "MEMORY.md").write_text(
        "# Long-Term Memory\n\n## Promoted From Short-Term Memory (2026-06-20)\n\n"
        + COPY_ENTRY, encoding="utf-8")
    with open_index() as index:
        index.sync()
        hits = index.search(COPY_QUERY, max_results=1, min_score=0.0, record=False)
        assert [h.path for h in hits] == ["memory/2026-06-12.md"], hits
        assert hits[0].focus_start == 3  # and its focus is the copied line
        # At the defaults the long day may not pass min_score; then the copy shows the fact,
        # with its own score (not one below min_score).
        hits = index.search("who owns the payments queue migration", record=False)
        assert hits and "Ana owns the migration" in hits[0].snippet, hits
        if hits[0].path == "MEMORY.md":
            assert hits[0].score >= index.settings.query.min_score, hits
