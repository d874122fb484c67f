"""tests/fast_budget.py: a fast test over its limit fails, saying what to do; a slow one, or any
test in a run with the slow ones too and within the margin, does not; a fast run over its budget
fails as a whole; a loaded machine stretches the limits. Run on a small suite of its own, with
limits small enough to cross by sleeping and the machine's load set."""

from __future__ import annotations

import pytest

import fast_budget

SUITE = """
import time
import pytest

def test_quick():
    pass

def test_sleepy():
    time.sleep(0.15)

@pytest.mark.slow
def test_marked():
    time.sleep(0.15)

@pytest.fixture
def slow_setup():
    time.sleep(0.07)

def test_setup_counts(slow_setup):
    time.sleep(0.07)
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setattr(fast_budget, "stretch", lambda: 1.0)  # a machine of its own
    pytester.makeini("[pytest]\nmarkers = slow: slow\nfast_test_limit = 0.1\n"
                     "fast_subset_budget = 60\n")
    pytester.makeconftest('pytest_plugins = ["fast_budget"]\n')
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def test_a_fast_test_over_its_limit_fails_and_says_to_mark_it_slow(suite) -> None:
    result = suite.runpytest("-m", "not slow")
    result.assert_outcomes(passed=1, failed=2, deselected=1)
    result.stdout.fnmatch_lines([
        "*test_sleepy is not marked slow and took * s (setup * s + call * s), over the "
        "0.1 s a fast test may take: mark it slow (@pytest.mark.slow, or SLOW_MODULES in "
        "tests/conftest.py) or make it cheaper*"])
    result.stdout.fnmatch_lines(["*test_setup_counts is not marked slow*"])


def test_with_the_slow_tests_too_a_fast_test_has_a_margin(suite) -> None:
    suite.runpytest().assert_outcomes(passed=4)
    suite.makeini("[pytest]\nmarkers = slow: slow\nfast_test_limit = 0.03\n")
    result = suite.runpytest()  # 0.15 s and 0.14 s are over 4 x 0.03 s
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*over the 0.12 s a fast test may take*"])


def test_a_fast_run_over_its_budget_fails_as_a_whole(suite) -> None:
    suite.makeini("[pytest]\nmarkers = slow: slow\nfast_subset_budget = 0.1\n")
    result = suite.runpytest("-m", "not slow")
    result.assert_outcomes(passed=3, deselected=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*fast subset over budget*",
                                 '*pytest -m "not slow" took * s, over its 0.1 s budget*'])
    assert suite.runpytest().ret == pytest.ExitCode.OK  # not the fast run: no budget


def test_a_loaded_machine_stretches_the_limit_by_its_load(suite, monkeypatch) -> None:
    monkeypatch.setattr(fast_budget, "stretch", lambda: 2.0)
    suite.runpytest("-m", "not slow").assert_outcomes(passed=3, deselected=1)  # 0.1 s x 2
    suite.makeini("[pytest]\nmarkers = slow: slow\nfast_test_limit = 0.05\n")
    result = suite.runpytest("-m", "not slow")
    result.assert_outcomes(passed=1, failed=2, deselected=1)
    result.stdout.fnmatch_lines(["*over the 0.1 s (0.05 s, x2.0 for the machine's load) a fast*"])
