"""Search hits as the command line prints them (cli/hits.py)."""

from __future__ import annotations

from argparse import Namespace

import pytest

from openmemd.cli.hits import show_search
from openmemd.protocol.replies import Explain, Hit, SearchReply


def _hit(score: float, gate: float) -> Hit:
    explain = Explain(mode="hybrid", legs=("keyword", "vector"), vector_score=0.5,
                      vector_cosine=0.8, keyword_score=0.6, bm25_rank=-3.0, coverage=1.0,
                      gate_score=gate, decay=1.0, age_days=None, mmr_position=None,
                      relaxed=False, keyword_evidence=0.6, evidence=0.7, query_evidence=0.7,
                      score=score)
    return Hit("memory/2026-03-01.md", 1, 2, score, "Booked flights to Lisbon.", "memory",
               citation="memory/2026-03-01.md#L1-L2", explain=explain)


def _shown(capsys: pytest.CaptureFixture[str], min_score: float | None, *hits: Hit) -> str:
    reply = SearchReply(hits, provider="none", model="fts-only", mode="fts-only")
    args = Namespace(json=False, min_score=min_score, explain=False, agent="main")
    assert show_search(args, reply, lambda: pytest.fail("settings are not needed")) == 0
    return capsys.readouterr().out


def test_a_hit_shown_under_min_score_says_why_on_its_own_line(capsys) -> None:
    # The score orders the results; the gate (search/evidence.py) decides which show: a hit
    # under --min-score is there because its gate passed it, and says so.
    out = _shown(capsys, 0.4, _hit(0.31, 0.52))
    lines = out.splitlines()
    assert lines[0].startswith("0.310 memory/2026-03-01.md:1-2")
    assert ("  shown under min score 0.4: its gate 0.520 passed it (the score orders the "
            "results, the gate decides which are shown)") in lines


def test_a_hit_over_min_score_or_without_one_asked_has_no_such_line(capsys) -> None:
    assert "shown under" not in _shown(capsys, 0.3, _hit(0.31, 0.52))
    assert "shown under" not in _shown(capsys, None, _hit(0.31, 0.52))
