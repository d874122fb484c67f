"""Dated Markdown headings (text/headings.py)."""

from __future__ import annotations

import datetime as dt

from openmemd.text.headings import dated_sections, heading_day, heading_days

D1, D2 = dt.date(2026, 6, 30), dt.date(2026, 7, 1)


def test_a_heading_names_its_first_iso_day() -> None:
    assert heading_day("## 2026-06-30 decisions") == D1
    assert heading_day("### standup (2026-07-01, 2026-07-02)") == D2
    assert heading_day("- 2026-06-30 is not a heading") is None
    assert heading_day("## 2026-02-30 is no day") is None
    assert heading_day("#2026-06-30 needs a space") is None
    assert list(heading_days("x\n## 2026-06-30\ny\n# 2026-07-01 z")) == [D1, D2]


def test_a_section_runs_to_the_next_heading_of_its_level_or_above() -> None:
    text = "\n".join([
        "# Memory",                 # 1
        "## 2026-06-30 decisions",  # 2
        "- Redis",                  # 3
        "### details",              # 4: a sub-heading stays in the section
        "- TTLs",                   # 5
        "### 2026-07-01 follow-up",  # 6: a dated sub-heading takes over
        "- cron",                   # 7
        "## People",                # 8: the section ends
        "- Alice",                  # 9
    ])
    assert dated_sections(text) == {2: D1, 3: D1, 4: D1, 5: D1, 6: D2, 7: D2}
