#!/usr/bin/env python3
"""Questions a person asks of their own MEMORY.md, at the search defaults.

The workspace is the test suite's curated one (`tests/long_term_notes.py`: a MEMORY.md of ~45
facts under sections, and 40 daily notes full of related words). Each question below names one
fact in the words a person would use, most of them not the fact's own; the script reports
where that fact ranks with the defaults (maxResults 6, minScore 0.35) and with minScore 0,
and how many land in the first three; then questions about things the workspace never
mentions, and how many of them return anything at the defaults (each one that does is a false
hit).

    python bench/memory_questions.py [--state-dir STATE]

The first run embeds the workspace (~1 min); a `--state-dir` keeps its index for the next run.
The questions were written after the facts, by the engineers who tune the search, so this is a
check of how a person meets it, not an unseen set.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from long_term_notes import line_of, write_workspace
from openmemd.api import MemoryIndex
from openmemd.config import EmbeddingSettings, Settings

# (question, a piece of the MEMORY.md line that answers it)
QUESTIONS = [
    ("what editor do I use", "Neovim"), ("which terminal do I use", "WezTerm"),
    ("what am I allergic to", "peanuts"), ("what is my partner's name", "Partner"),
    ("what are my pets called", "Miso"), ("when is my birthday", "Birthday"),
    ("how do I take my coffee", "dark roast"), ("how often do I go running", "Runs 5 km"),
    ("which languages do I speak", "Portuguese"), ("what is my favourite book", "Left Hand"),
    ("who is on my team", "Ana, Priya"),
    ("what language is the billing service written in", "billing service is written"),
    ("when do I do code reviews", "Code reviews"), ("when is the on-call handover", "handover"),
    ("can we deploy on Friday afternoon", "Deploys are frozen"),
    ("what database do we use", "PostgreSQL 16"), ("how do I like to merge", "squash"),
    ("where do design docs go", "design docs"), ("when is quarterly planning", "Quarterly"),
    ("do I like morning meetings", "dislikes meetings"), ("which airline do I prefer", "TAP"),
    ("what food do I like", "spicy"), ("what tea do I drink", "genmaicha"),
    ("when should reminders be sent", "reminders"),
    ("what music do I listen to while working", "lo-fi"), ("who is my dentist", "Dr. Costa"),
    ("what is wrong with my knee", "knee"), ("do I take any supplements", "vitamin D"),
    ("when does the lease renew", "lease renews"), ("who is my internet provider", "MEO"),
    ("where is the router", "router"), ("how often do the plants need water", "plants"),
    ("when is recycling collected", "Recycling"), ("where does my sister live", "Inês"),
    ("when do my parents visit", "Parents visit"),
    ("what flowers does my mother like", "orchids"),
    ("which programming language for new projects", "TypeScript"),
    ("favourite coding language for fresh code", "TypeScript"),
    ("what text editor", "Neovim"), ("what is my cat's name", "Miso"),
]

# Things the workspace never mentions (its facts do name a dentist, a knee, a partner, books)
NEVER_WRITTEN = [
    "what is my blood type", "what car do I drive", "what is my salary",
    "which gym do I go to", "what is my shoe size", "what is my passport number",
    "which football team do I support", "where did I go to university",
    "what is my favourite film", "what is my bank's name",
]


def _rank(citations: list[str], wanted: str) -> int | None:
    return citations.index(wanted) + 1 if wanted in citations else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--state-dir", type=Path, default=None,
                    help="workspace and index (default: a temp dir, nothing is reused)")
    args = ap.parse_args(argv)
    tmp = None
    if args.state_dir is not None:
        base = args.state_dir.resolve()
    else:
        tmp = tempfile.TemporaryDirectory(prefix="openmemd-mdq-")
        base = Path(tmp.name)
    workspace = base / "workspace"
    if not (workspace / "MEMORY.md").exists():
        workspace.mkdir(parents=True, exist_ok=True)
        write_workspace(workspace)
    settings = Settings(state_dir=str(base / "state"),
                        embedding=EmbeddingSettings(provider="local"))
    top3_defaults = top3_any = 0
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        for question, fact in QUESTIONS:
            wanted = f"MEMORY.md#L{line_of(fact)}"
            shown = [h.citation for h in index.search(question, record=False)]
            ranked = [h.citation for h in index.search(question, record=False, min_score=0.0)]
            at_defaults, at_zero = _rank(shown, wanted), _rank(ranked, wanted)
            top3_defaults += at_defaults is not None and at_defaults <= 3
            top3_any += at_zero is not None and at_zero <= 3
            print(f"{at_defaults or '-':>3}  {at_zero or '-':>3}  ({len(shown)} shown)  "
                  f"{question}")
        false_hits = 0
        print()
        for question in NEVER_WRITTEN:
            shown = [h.citation for h in index.search(question, record=False)]
            false_hits += bool(shown)
            print(f"{len(shown)} shown  {question}" + (f"  ({shown[0]} first)" if shown else ""))
    n = len(QUESTIONS)
    print(f"\nrank at the defaults, at minScore 0; in the first three: {top3_defaults}/{n} at "
          f"the defaults, {top3_any}/{n} at minScore 0")
    print(f"never written: {false_hits}/{len(NEVER_WRITTEN)} returned something at the defaults")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
