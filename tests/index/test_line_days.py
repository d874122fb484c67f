"""The days of lines the index cannot date (index/line_days.py): transcript messages and
MEMORY.md's dated sections, on real files."""

from __future__ import annotations

import json
import os
from datetime import date, timezone
from pathlib import Path

from openmemd.index.line_days import LineDays
from openmemd.index.scan import ScanScope

JULY = (date(2026, 7, 1), date(2026, 7, 31))


def in_july(day: date) -> bool:
    return JULY[0] <= day <= JULY[1]


def write(path: Path, *stamps: str | None) -> None:
    lines = [json.dumps({"type": "message", **({"timestamp": s} if s else {}),
                         "message": {"role": "user", "content": f"message {i}"}})
             for i, s in enumerate(stamps)]
    path.write_text("\n".join(lines) + "\n")


def test_days_by_jsonl_line_only_for_recent_transcripts(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    write(sessions / "now.jsonl", "2026-06-30T10:00:00Z", "2026-07-02T10:00:00Z", None)
    write(sessions / "old.jsonl", "2026-07-03T10:00:00Z")
    os.utime(sessions / "old.jsonl", (0, 1_600_000_000))  # last written in 2020: not read
    (sessions / "notes.txt").write_text("not a transcript")
    scope = ScanScope(tmp_path, sources=("memory", "sessions"))
    days = LineDays()
    assert days.in_range(scope, JULY[0], in_july, timezone.utc) == {
        "sessions/now.jsonl": {2: date(2026, 7, 2)}}  # line 3 has no time: no day
    # a rewrite of the same size with its mtime put back is still seen (the ctime moved)
    st = (sessions / "now.jsonl").stat()
    write(sessions / "now.jsonl", "2026-07-09T10:00:00Z", "2026-07-02T10:00:00Z", None)
    os.utime(sessions / "now.jsonl", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (sessions / "now.jsonl").stat().st_size == st.st_size
    assert days.in_range(scope, JULY[0], in_july, timezone.utc)["sessions/now.jsonl"] == {
        1: date(2026, 7, 9), 2: date(2026, 7, 2)}
    # transcripts are not searched: nothing is read
    assert days.in_range(ScanScope(tmp_path), JULY[0], in_july, timezone.utc) == {}


def test_long_term_sections_by_their_dated_headings(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(
        "# Long-term memory\n\n- Prefers tea.\n\n## 2026-07-02 decisions\n\n"
        "- Chose Redis for the job queue.\n- Dropped the cron host.\n\n## People\n\n"
        "- Alice runs the CI.\n")
    scope = ScanScope(tmp_path)
    days = LineDays().in_range(scope, JULY[0], in_july, timezone.utc)
    assert days == {"MEMORY.md": {n: date(2026, 7, 2) for n in range(5, 10)}}
    # not over transcripts only
    assert LineDays().in_range(scope, JULY[0], in_july, timezone.utc, sources=["sessions"]) == {}
