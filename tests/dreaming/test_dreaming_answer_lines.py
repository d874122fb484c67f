"""A recall records the lines that answered, and promotion writes those lines, not the day."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from openmemd.config import DeepPhaseSettings, DreamingSettings
from openmemd.dreaming import RecallHit, record_recalls, run_sweep
from openmemd.dreaming.answer_lines import best_lines
from openmemd.dreaming.explain import explain
from openmemd.index.tiktoken_offline import get_encoding

UTC = timezone.utc
T0 = datetime(2026, 4, 6, 10, 0, tzinfo=UTC)
NOTE = "memory/2026-04-06.md"
DAY = """# 2026-04-06

Gym in the morning: squats 5x5 at 80 kg, then rowing.
Ran 8 km along the river in 41 minutes, new best.
Vendor contract with Acme renews on June 1; legal wants the indemnity clause changed.
Terraform plan for the staging VPC failed on the NAT gateway quota.
Design review of the billing service moved to Thursday.
Bought hiking boots at Alpine Outfitters: Salomon Quest 4, size 44, 189 euros.
Dinner with Sam, talked about the summer trip.
"""
BOOTS_LINE = 8
QUERIES = ["which hiking boots did I buy", "boots size", "where did I buy the hiking boots",
           "Salomon boots price", "hiking boots shop"]


def settings() -> DreamingSettings:
    return DreamingSettings(timezone="UTC")


def make_ws(tmp_path: Path, text: str = DAY) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / NOTE).write_text(text, encoding="utf-8")
    return ws


def search_day_often(ws: Path, text: str = DAY, **focus: int) -> None:
    """What an agent's searches leave: each hit is the whole day's chunk (lines 1..N)."""
    last = len(text.splitlines())
    for day, query in enumerate(QUERIES):
        hit = RecallHit(NOTE, 1, last, 0.74, text, **focus)
        record_recalls(ws, query, [hit], now=T0 + timedelta(days=day, hours=1),
                       timezone="UTC")


def test_best_lines_prefers_more_distinct_terms_then_fewer_lines_then_the_top() -> None:
    chunk = "boots\nhiking boots at the shop\n\nhiking boots again\nother"
    assert best_lines("hiking boots", chunk, 10) == (11, 11)
    # Two terms on two lines: the window holds both; a blank line is never spanned.
    assert best_lines("Salomon price", "Salomon Quest 4\n189 euros price\n\nprice", 1) == (1, 2)
    assert best_lines("zebra", chunk, 1) is None and best_lines("the", "", 1) is None


def test_a_many_topic_day_promotes_the_line_about_the_boots(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    search_day_often(ws)
    store = json.loads((ws / "memory/.dreams/short-term-recall.json").read_text("utf-8"))
    key = f"memory:{NOTE}:{BOOTS_LINE}:{BOOTS_LINE}"
    assert list(store["entries"]) == [key]  # keyed on the answering line, not the chunk
    result = run_sweep(ws, settings(), now=T0 + timedelta(days=4, hours=5))
    assert [p.key for p in result.promoted] == [key]
    memory = (ws / "MEMORY.md").read_text("utf-8")
    bullets = [line for line in memory.splitlines() if line.startswith("- ")]
    assert bullets == [
        "- Bought hiking boots at Alpine Outfitters: Salomon Quest 4, size 44, 189 euros. "
        f"Source: {NOTE}#L{BOOTS_LINE} [score={result.promoted[0].score:.3f} recalls=5 "
        f"avg=0.740 source={NOTE}:{BOOTS_LINE}-{BOOTS_LINE}]"]
    for other in ("Gym", "Terraform", "Vendor contract", "Design review", "Dinner"):
        assert other not in memory


def test_the_search_focus_is_preferred_to_the_term_match(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    search_day_often(ws, focus_start=5, focus_end=6)  # the search said: lines 5-6
    store = json.loads((ws / "memory/.dreams/short-term-recall.json").read_text("utf-8"))
    assert list(store["entries"]) == [f"memory:{NOTE}:5:6"]
    assert store["entries"][f"memory:{NOTE}:5:6"]["snippet"].startswith("Vendor contract")


def test_promoted_text_is_cut_to_max_promoted_snippet_tokens(tmp_path: Path) -> None:
    long_line = ("Bought hiking boots at Alpine Outfitters after trying " +
                 " ".join(f"model{i} in size {40 + i % 6}" for i in range(80)) + ".")
    text = f"# 2026-04-06\n\n{long_line}\n"
    ws = make_ws(tmp_path, text)
    search_day_often(ws, text)
    cap = DeepPhaseSettings().max_promoted_snippet_tokens
    assert cap == 160
    result = run_sweep(ws, settings(), now=T0 + timedelta(days=4, hours=5))
    promoted = result.promoted[0].text
    assert promoted.endswith("…") and promoted.startswith("Bought hiking boots")
    assert len(get_encoding().encode(promoted)) <= cap
    assert len(get_encoding().encode(long_line)) > cap
    small = dataclasses.replace(settings(), deep=dataclasses.replace(
        DeepPhaseSettings(), max_promoted_snippet_tokens=0))
    ws2 = make_ws(tmp_path / "two", text)
    search_day_often(ws2, text)
    whole = run_sweep(ws2, small, now=T0 + timedelta(days=4, hours=5)).promoted[0].text
    assert whole == long_line  # 0 = never cut


def test_explain_shows_the_lines_and_the_queries_that_recalled_them(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    search_day_often(ws)
    [found] = explain(ws, "boots", settings(), now=T0 + timedelta(days=4, hours=5))
    assert (found.start_line, found.end_line) == (BOOTS_LINE, BOOTS_LINE)
    assert found.queries == tuple(QUERIES)
    text = found.format_text()
    assert f"lines {NOTE}#L{BOOTS_LINE}" in text
    assert "recalled by: which hiking boots did I buy; boots size" in text


def test_over_the_budget_the_least_recalled_promotions_move_to_the_archive(
        tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    user = "# Long-Term Memory\n\nMy own note: never store secrets in notes.\n"
    old = [(f"memory:memory/2026-03-0{i}.md:1:1", f"- Old fact {i} about the garden shed. "
            f"[score=0.850 recalls={r} avg=0.700 source=memory/2026-03-0{i}.md:1-1]")
           for i, r in ((1, 3), (2, 9), (3, 4))]
    memory = user + "\n## Promoted From Short-Term Memory (2026-03-10)\n\n" + "".join(
        f"<!-- openclaw-memory-promotion:{key} -->\n{bullet}\n" for key, bullet in old)
    (ws / "MEMORY.md").write_text(memory, encoding="utf-8")
    search_day_often(ws)  # the boots: 5 recalls, more than old facts 1 (3) and 3 (4)
    budget = len(memory) + 150  # room for less than the new entry (~300 characters)
    result = run_sweep(ws, settings(), now=T0 + timedelta(days=4, hours=5),
                       memory_max_chars=budget)
    assert len(result.promoted) == 1
    after = (ws / "MEMORY.md").read_text("utf-8")
    assert len(after) <= budget
    assert "Salomon Quest 4" in after and user in after  # the user's lines all stay
    assert "Old fact 2" in after  # recalled 9 times: better proven than the newcomer
    archive = (ws / "memory/archive/MEMORY-2026-04-10.md").read_text("utf-8")
    moved = [key for key, _ in old if key not in after]
    assert moved == [old[0][0]]  # the least recalled only, as much as needed
    for key, bullet in old:  # nothing lost: each old entry is in one file or the other
        assert (f"<!-- openclaw-memory-promotion:{key} -->\n{bullet}" in after) != (
            f"<!-- openclaw-memory-promotion:{key} -->\n{bullet}" in archive)
    backups = list((ws / "memory/.dreams/backups").iterdir())
    assert [b.read_text("utf-8") for b in backups] == [memory]
    assert any("memory/archive/MEMORY-2026-04-10.md" in m for m in result.messages)


def test_the_users_own_lines_are_never_moved_even_over_the_budget(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    user = "# Long-Term Memory\n\n" + "My own line about the garden.\n" * 20
    (ws / "MEMORY.md").write_text(user, encoding="utf-8")
    search_day_often(ws)
    result = run_sweep(ws, settings(), now=T0 + timedelta(days=4, hours=5),
                       memory_max_chars=len(user) + 10)
    assert result.promoted == () and result.deep.size_capped
    assert (ws / "MEMORY.md").read_text("utf-8") == user
    assert not (ws / "memory/archive").exists()
