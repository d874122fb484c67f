"""Derived files: indexed, but left out of search results unless asked for.

Dreaming's phase reports (`memory/dreaming/<phase>/<day>.md`) are data *about* the notes: each
informative line is a copy of a note line that is itself indexed (a staged candidate, a
"possible lasting truth"), the rest is template text ("confidence:", "evidence:", "Possible
Lasting Truths", candidate keys). In results they can only duplicate their sources -- often
outranking them, since one report gathers many related snippets -- or match a query on their
template words. So a default search skips them in the store, before candidates are counted;
`query.dreaming_reports = true` brings them back (they stay readable with `get` either way).
The prefix is dreaming.layout.REPORTS_DIR (tests check that they agree).
"""

from __future__ import annotations

DERIVED_PREFIX = "memory/dreaming/"


def is_derived(path: str) -> bool:
    return path.startswith(DERIVED_PREFIX)
