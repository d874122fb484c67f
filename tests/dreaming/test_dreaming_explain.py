"""`dream explain` scores an entry as the sweep would now: the same score as `dream --dry-run`
gives it, and it takes the citations search prints."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_dreaming_sweep import NOTE, SWEEP_AT, make_ws, recall_often, settings

from openmemd.api.dreams import explain_dream
from openmemd.config import PHASES
from openmemd.dreaming import run_sweep
from openmemd.dreaming.explain import explain


@pytest.mark.parametrize("phases", [PHASES, ("deep",)])
def test_explain_gives_the_dry_runs_score(tmp_path: Path, phases: tuple[str, ...]) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    result = run_sweep(ws, settings(), phases=phases, dry_run=True, now=SWEEP_AT)
    (promoted,) = result.promoted
    (why,) = explain(ws, promoted.key, settings(), now=SWEEP_AT, phases=phases)
    assert round(why.score, 6) == round(promoted.score, 6)


@pytest.mark.parametrize("cited", [f"{NOTE}#L5", f"{NOTE}#L4-L6", f"{NOTE}:5-5", f"{NOTE}:5",
                                   f"{NOTE}:3-9"])
def test_explain_takes_a_search_citation(tmp_path: Path, cited: str) -> None:
    ws = make_ws(tmp_path)
    recall_often(ws)
    recall_often(ws, line=6, snippet="- Backups go to the S3 glacier bucket every night.")
    found = {e.start_line for e in explain_dream(ws, cited, settings())}
    assert found == ({5, 6} if cited.endswith(("3-9", "4-L6")) else {5})
    assert explain_dream(ws, f"{NOTE}:7-9", settings()) == []
