"""Pure pieces of dreaming: concept tags, chunking, scoring formulas, filters, relocation."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from openmemd.config import DeepPhaseSettings
from openmemd.dreaming.clock import day_within_lookback, format_diary_date, iso_z, parse_iso
from openmemd.dreaming.concepts import derive_concept_tags
from openmemd.dreaming.diary import insert_entry
from openmemd.dreaming.ingest import build_snippets, strip_managed_blocks
from openmemd.dreaming.layout import is_short_term_path
from openmemd.dreaming.memory_md import clean_text, truncate_tokens
from openmemd.dreaming.promotion_score import (
    consolidation_component,
    evaluate,
    organic_evidence,
    phase_boost,
)
from openmemd.dreaming.recall import hash_query
from openmemd.dreaming.recall_store import RecallEntry
from openmemd.dreaming.rehydrate import relocate
from openmemd.dreaming.snippet_filter import is_unpromotable, looks_like_dreaming_output
from openmemd.dreaming.state import PhaseSignal
from openmemd.text.promotion import marker_keys

UTC = timezone.utc
NOW = datetime(2026, 4, 10, 12, tzinfo=UTC)


def test_concept_tags_follow_openclaw_rules() -> None:
    tags = derive_concept_tags("memory/2026-04-06.md", "Gateway router uses VLAN 42; "
                               "backups to s3 via api.v2 on 2026-04-01")
    assert tags[:3] == ["backup", "backups", "gateway"]  # glossary terms first
    assert "api.v2" in tags and "42" not in tags and "2026-04-01" not in tags
    assert "the" not in derive_concept_tags("x.md", "the the the thing")
    assert len(derive_concept_tags("x.md", " ".join(f"word{i}x" for i in range(20)))) == 8
    assert derive_concept_tags("memory/2026-04-06.md", "网关 配置 路由器") == [
        "路由器", "网关", "配置"]
    assert derive_concept_tags("memory/notes_file.md", "") == ["notes-file.md"]


def test_short_term_paths() -> None:
    assert is_short_term_path("memory/2026-04-06.md")
    assert is_short_term_path("memory/a/b/2026-04-06.md")
    assert is_short_term_path("2026-04-06.md")
    assert is_short_term_path("memory/.dreams/session-corpus/2026-04-06.txt")
    for path in ("MEMORY.md", "memory/topic.md", "memory/dreaming/rem/2026-04-06.md",
                 "memory/2026-04-06-slug.md", "notes/2026-04-06.txt"):
        assert not is_short_term_path(path), path


def test_chunks_keep_heading_context_and_drop_generic_day_headings() -> None:
    lines = ["# April 3", "", "## Deploy plan", "- Freeze the main branch", "- Tag release v2",
             "", "Paragraph one talks about rollout.", "Paragraph two continues it.", "",
             "## Monday", "- Short", "- A sufficiently long item"]
    chunks = build_snippets(lines, 10)
    assert [(c.start_line, c.end_line, c.snippet) for c in chunks] == [
        (4, 5, "Deploy plan: Freeze the main branch; Tag release v2"),
        (7, 8, "Deploy plan: Paragraph one talks about rollout. Paragraph two continues it."),
        (12, 12, "Deploy plan: A sufficiently long item"),
    ]
    many = build_snippets([f"- item number {i}" for i in range(10)], 10)
    assert [(c.start_line, c.end_line) for c in many] == [(1, 4), (5, 8), (9, 10)]


def test_managed_blocks_are_stripped_even_when_unterminated() -> None:
    lines = ["Keep me", "## Light Sleep", "<!-- openclaw:dreaming:light:start -->",
             "- Candidate: x", "<!-- openclaw:dreaming:light:end -->", "After",
             "<!-- openclaw:dreaming:rem:start -->", "- Theme: `x`", "## Next", "Tail"]
    assert strip_managed_blocks(lines) == ["Keep me", "", "", "", "", "After", "", "",
                                           "## Next", "Tail"]


def test_dreaming_output_filter() -> None:
    report_like = [
        "- Candidate: Gateway notes - confidence: 0.62 - evidence: memory/x.md:1-2 - recalls: 3",
        "status: staged - Candidate: User: remember the VLAN",
        "- Theme: `gateway` kept surfacing across 3 memories. - confidence: 1.00",
        "- confidence: 0.62", "recalls: 3",
        "- A fact [score=0.912 recalls=4 avg=0.700 source=memory/2026-04-01.md:1-1]",
        "- A truth [confidence=0.81 evidence=memory/2026-04-01.md:3-3]",
        "<!-- openclaw-memory-promotion:memory:memory/x.md:1:1 -->",
    ]
    for text in report_like:
        assert looks_like_dreaming_output(text), text
    for text in ("Candidate: Alice for the backend role", "Note: call Bob about the lease",
                 "Our confidence in the vendor dropped after the outage",
                 "The status of the migration is staged rollout"):
        assert not looks_like_dreaming_output(text), text
    assert is_unpromotable("## Heading\n- ") and is_unpromotable("- ") and is_unpromotable("")
    assert not is_unpromotable("## Heading\nReal content here")


def _entry(**kw: object) -> RecallEntry:
    base = dict(key="memory:memory/2026-04-06.md:1:1", path="memory/2026-04-06.md",
                start_line=1, end_line=1, snippet="Gateway router needs VLAN 42",
                recall_count=6, total_score=4.2, max_score=0.8,
                last_recalled_at="2026-04-09T12:00:00.000Z",
                query_hashes=tuple(f"{i:012x}" for i in range(4)),
                recall_days=("2026-04-03", "2026-04-05", "2026-04-09"),
                concept_tags=("gateway", "router", "vlan"))
    base.update(kw)
    return RecallEntry(**base)  # type: ignore[arg-type]


def test_score_matches_openclaw_formula() -> None:
    entry = _entry()
    ev = evaluate(entry, None, DeepPhaseSettings(), NOW)
    frequency = math.log1p(6) / math.log1p(10)
    relevance = 4.2 / 6
    diversity = 4 / 5
    recency = math.exp(-math.log(2) / 14 * 1.0)
    consolidation = 0.55 * (math.log1p(2) / math.log1p(4)) + 0.45 * (6 / 7)
    conceptual = 3 / 6
    expected = (0.24 * frequency + 0.30 * relevance + 0.15 * diversity + 0.15 * recency
                + 0.10 * consolidation + 0.06 * conceptual)
    assert ev.raw_score == pytest.approx(expected)
    assert ev.components.consolidation == pytest.approx(consolidation)
    assert consolidation_component([]) == 0 and consolidation_component(["2026-04-01"]) == 0.2
    assert consolidation_component([], grounded_count=3) == 1.0


def test_phase_boost_fresh_beats_stale() -> None:
    fresh = PhaseSignal("k", light_hits=6, rem_hits=6, last_light_at=iso_z(NOW),
                        last_rem_at=iso_z(NOW))
    stale = PhaseSignal("k", light_hits=6, rem_hits=6,
                        last_light_at=iso_z(NOW - timedelta(days=14)),
                        last_rem_at=iso_z(NOW - timedelta(days=14)))
    assert phase_boost(fresh, NOW) == pytest.approx(0.15)
    assert phase_boost(stale, NOW) == pytest.approx(0.075)
    assert phase_boost(None, NOW) == 0


def test_organic_evidence_excludes_ingestion() -> None:
    days = ("2026-04-03", "2026-04-05")
    entry = _entry(recall_count=2, daily_count=1, recall_days=days,
                   query_hashes=(hash_query("__dreaming_daily__:2026-04-03"), hash_query("x"),
                                 hash_query("y")))
    evidence = organic_evidence(entry)
    assert (evidence.recalls, evidence.queries, evidence.days) == (2, 2, 1)


def test_relocate_prefers_exact_then_nearest_and_rejects_fragments() -> None:
    lines = ["intro", "alpha beta", "gamma", "", "alpha beta", "gamma"]
    assert relocate(lines, 5, 6, "alpha beta gamma") == (5, 6, "alpha beta gamma")
    assert relocate(lines, 4, 5, "alpha beta gamma") == (5, 6, "alpha beta gamma")  # no blank
    assert relocate(lines, 1, 2, "alpha beta gamma") == (2, 3, "alpha beta gamma")
    long = "The deleted paragraph said many important things about the database migration"
    assert relocate(["the database"], 1, 1, long) is None  # a surviving fragment is not it
    assert relocate(["x", "alpha beta gamma delta"], 2, 2, "…beta gamma…") == (
        2, 2, "alpha beta gamma delta")


def test_memory_md_helpers() -> None:
    assert marker_keys("<!-- openclaw-memory-promotion:memory:a.md:1:2 -->\n"
                           "<!--openclaw-memory-promotion: memory:b.md:3:4 -->") == {
        "memory:a.md:1:2", "memory:b.md:3:4"}
    assert clean_text("- [ ] ship it") == "ship it" and clean_text("## Plan: go") == "Plan: go"
    assert truncate_tokens("one two three four", 3) == "one two…"
    assert truncate_tokens("short", 0) == "short" and truncate_tokens("short", 5) == "short"


def test_clock_helpers() -> None:
    assert iso_z(datetime(2026, 4, 6, 10, 0, 0, 123456, tzinfo=UTC)) == \
        "2026-04-06T10:00:00.123Z"
    assert parse_iso("2026-04-06T10:00:00.000Z") == datetime(2026, 4, 6, 10, tzinfo=UTC)
    assert parse_iso("garbage") is None
    assert day_within_lookback("2026-04-08", NOW - timedelta(days=2))
    assert not day_within_lookback("2026-04-07", NOW - timedelta(days=2))
    moment = datetime(2026, 4, 12, 10, 0, tzinfo=UTC)
    assert format_diary_date(moment, ZoneInfo("America/Los_Angeles")) == \
        "April 12, 2026 at 3:00 AM PDT"
    assert format_diary_date(moment, ZoneInfo("Asia/Kolkata")) == \
        "April 12, 2026 at 3:30 PM GMT+5:30"
    assert format_diary_date(moment, UTC) == "April 12, 2026 at 10:00 AM UTC"


def test_diary_insertion_variants() -> None:
    entry = "\n---\n\n*April 12, 2026 at 3:00 AM UTC*\n\nText.\n"
    created = insert_entry("", entry)
    assert created == ("# Dream Diary\n\n<!-- openclaw:dreaming:diary:start -->\n---\n\n"
                       "*April 12, 2026 at 3:00 AM UTC*\n\nText.\n\n"
                       "<!-- openclaw:dreaming:diary:end -->\n")
    prefixed = insert_entry("## Deep Sleep\nold\n", entry)
    assert prefixed.endswith("<!-- openclaw:dreaming:diary:end -->\n\n## Deep Sleep\nold\n")
    unterminated = insert_entry("# Dream Diary\n\n<!-- openclaw:dreaming:diary:start -->\n",
                                entry)
    assert unterminated.count("<!-- openclaw:dreaming:diary:end -->") == 1


def test_relocate_finds_a_search_snippet_cut_at_700_chars() -> None:
    lines = ["# Log", ""] + [f"- step {i}: restarted worker {i} after the config reload"
                             for i in range(30)]
    chunk = "\n".join(lines[2:32])
    snippet = chunk[:700]  # what the search layer returns for a long chunk
    assert relocate(lines, 3, 32, snippet) == (3, 32, " ".join(lines[2:32]))
    shifted = ["new line"] * 5 + lines
    assert relocate(shifted, 3, 32, snippet) == (8, 37, " ".join(lines[2:32]))
