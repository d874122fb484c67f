"""The fast subset stays fast (`pytest -m "not slow"`): a test not marked slow that takes longer
than `fast_test_limit` fails, saying to mark it slow or make it cheaper, and a fast run that takes
longer than `fast_subset_budget` fails as a whole. The one place the tests time anything; the
figures and why they were chosen are in pyproject.toml's [tool.pytest.ini_options]."""

from __future__ import annotations

import os
import time
from collections.abc import Generator

import pytest

# In a run with the slow tests too (CI's `pytest`), a fast test can share the cores with what a
# slow test leaves winding down (a daemon stopping, model threads): there it fails only when it
# takes this many times its limit, which still catches a test that belongs with the slow ones.
SHARED_RUN_MARGIN = 4.0

_STARTED = pytest.StashKey[float]()
_SETUP = pytest.StashKey[float]()
_STRETCHES = pytest.StashKey[list[float]]()
_OVER_BUDGET = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("fast_test_limit", "seconds a test not marked slow may take (setup + call)",
                  type="float", default=5.0)
    parser.addini("fast_subset_budget", "seconds a `pytest -m 'not slow'` run may take in all",
                  type="float", default=90.0)


def fast_run(config: pytest.Config) -> bool:
    """Whether this run is the fast subset or part of it (any part must fit its budget too)."""
    return " ".join(str(config.getoption("markexpr") or "").split()) == "not slow"


def timed(config: pytest.Config) -> bool:
    """A debugger waiting at a prompt is not a slow test."""
    return not (config.getoption("usepdb", False) or config.getoption("trace", False))


def stretch() -> float:
    """How much other work on the machine stretches wall time now: runnable processes per core
    (the 1-minute load average), at least 1. The limits are for a machine this run has to itself,
    as CI's; on a shared one (several agents testing at once) they stretch as much."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:  # no load average on this platform
        return 1.0


def describe(seconds: float, factor: float) -> str:
    return f"{seconds:g} s" if factor == 1.0 else (
        f"{seconds:.1f} s ({seconds / factor:g} s, x{factor:.1f} for the machine's load)")


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_STARTED] = time.monotonic()
    session.config.stash[_STRETCHES] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if report.when == "setup":
        item.stash[_SETUP] = report.duration
    elif report.when == "call" and timed(item.config):
        factor = stretch()
        item.config.stash.setdefault(_STRETCHES, []).append(factor)
        if report.passed and item.get_closest_marker("slow") is None:
            check_test(item, report, factor)
    return report


def check_test(item: pytest.Item, report: pytest.TestReport, factor: float) -> None:
    setup = item.stash.get(_SETUP, 0.0)
    limit = float(item.config.getini("fast_test_limit")) * factor
    if not fast_run(item.config):
        limit *= SHARED_RUN_MARGIN
    if setup + report.duration > limit:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} is not marked slow and took {setup + report.duration:.1f} s "
            f"(setup {setup:.1f} s + call {report.duration:.1f} s), over the "
            f"{describe(limit, factor)} a fast test may take: mark it slow (@pytest.mark.slow, "
            "or SLOW_MODULES in tests/conftest.py) or make it cheaper")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if not (fast_run(config) and timed(config)) or _STARTED not in config.stash:
        return
    took = time.monotonic() - config.stash[_STARTED]
    stretches = config.stash.get(_STRETCHES, []) or [stretch()]
    factor = sum(stretches) / len(stretches)  # the run's mean load
    budget = float(config.getini("fast_subset_budget")) * factor
    if took > budget:
        config.stash[_OVER_BUDGET] = (
            f'pytest -m "not slow" took {took:.1f} s, over its {describe(budget, factor)} '
            "budget: mark the slowest fast tests slow (see --durations=30) or make them cheaper")
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    message = terminalreporter.config.stash.get(_OVER_BUDGET, None)
    if message:
        terminalreporter.section("fast subset over budget", red=True)
        terminalreporter.line(message, red=True)
