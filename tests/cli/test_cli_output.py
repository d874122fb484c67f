"""What the command line prints for a newcomer: `get` of a printed citation, --explain readable,
a dry run that says it would promote, and `dream explain` of a note already promoted."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest

from openmemd.cli import main
from openmemd.dreaming import RecallHit, record_recalls

NOTE = "memory/2026-11-01.md"
GATEWAY = "- The gateway router needs the VLAN 42 tag before the failover test."


@pytest.fixture
def cli(make_settings, workspace, tmp_path, capsys):
    make_settings('[dreaming]\ntimezone = "UTC"\n')
    endpoint = f"ipc://{tmp_path}/none.sock"  # nothing listens here

    def run(*args):
        code = main([*args, "--config", str(tmp_path / "config.toml"), "--endpoint", endpoint])
        out = capsys.readouterr()
        return code, out.out, out.err

    (workspace / "MEMORY.md").write_text("# Memory\n\nThe user's favourite tea is genmaicha.\n")
    (workspace / NOTE).write_text(f"# 2026-11-01\n\n{GATEWAY}\nPlanted tulip bulbs.\n")
    return run


def test_get_takes_the_citation_search_prints(cli):
    code, out, _ = cli("search", "tulip", "bulbs")
    # OpenClaw's line (the chunk: the whole note), then the line that answers (the citation).
    assert code == 0 and out.splitlines()[0].endswith(f"{NOTE}:1-4  → {NOTE}#L4")
    chunk, cited = out.splitlines()[0].split()[1::2]
    code, out, err = cli("get", chunk)
    assert (code, err) == (0, "") and out.endswith("Planted tulip bulbs.\n")
    assert out.startswith("# 2026-11-01\n")
    code, out, err = cli("get", cited)
    assert (code, err, out) == (0, "", "Planted tulip bulbs.\n")
    code, out, _ = cli("get", f"{NOTE}#L3-L4")
    assert code == 0 and out == f"{GATEWAY}\nPlanted tulip bulbs.\n"


def test_get_past_the_end_says_how_many_lines_the_file_has(cli):
    code, out, err = cli("get", "MEMORY.md", "--from", "999")
    assert code == 2 and out == ""
    assert err == "openmemd: MEMORY.md has 3 lines; line 999 is past its end\n"


def test_explain_is_one_rounded_line_per_component(cli):
    code, out, _ = cli("search", "genmaicha", "--explain")
    assert code == 0
    assert not re.search(r"\d\.\d{4,}", out)  # no raw 17-digit floats
    assert "{" not in out and "'" not in out.split("\n", 1)[1].split("explain:")[1]
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  explain: "))
    assert lines[at] == "  explain: keyword-only search, found by keyword"
    assert re.fullmatch(r"    keyword   \d\.\d{3}  bm25 rank -?[0-9.e+-]{1,9}  coverage \d+%",
                        lines[at + 1])
    assert lines[-2].startswith("    score     ") and lines[-1] == ""


def _recall_often(workspace, now):
    for days_ago, query in [(4, "q1"), (4, "q2"), (3, "q1"), (3, "q3"), (2, "q2"), (2, "q4"),
                            (1, "q3"), (1, "q5"), (0, "q4"), (0, "q1")]:
        record_recalls(workspace, query, [RecallHit(NOTE, 3, 3, 0.72, GATEWAY)],
                       now=now - timedelta(days=days_ago, hours=1), timezone="UTC")


def test_a_dry_run_says_it_would_promote(cli, workspace):
    _recall_often(workspace, datetime.now(timezone.utc))
    code, out, _ = cli("dream", "--dry-run")
    assert code == 0 and "would promote 1 into MEMORY.md" in out and " 1 promoted" not in out
    assert "openclaw-memory-promotion" not in (workspace / "MEMORY.md").read_text()
    code, out, _ = cli("dream", "explain", f"memory:{NOTE}:3:3")
    assert code == 0 and "eligible for promotion" in out


def test_explain_of_a_promoted_note_says_when_and_where(cli, workspace):
    _recall_often(workspace, datetime.now(timezone.utc))
    code, out, _ = cli("dream")
    assert code == 0 and "1 promoted into MEMORY.md" in out
    memory = (workspace / "MEMORY.md").read_text().split("\n")
    line = next(n for n, text in enumerate(memory, 1) if text.startswith(GATEWAY))
    code, out, _ = cli("dream", "explain", f"memory:{NOTE}:3:3")
    verdict = out.split("\n")[1]
    assert code == 0 and "not yet promoted" not in verdict
    assert re.search(rf"promoted \d{{4}}-\d\d-\d\dT[0-9:.]+Z into MEMORY.md:{line}$", verdict)
    code, out, _ = cli("dream", "explain", f"memory:{NOTE}:3:3", "--json")
    assert json.loads(out)[0]["promotedInto"] == f"MEMORY.md:{line}"
