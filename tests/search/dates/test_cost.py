"""What reading a query's dates costs (issue 43: 4 KB of "Jan 1 " took seconds, four times as
long for twice the text). Counted, not timed: the characters the date reader's regexes search
grow with the query's length, not with its length times its dates; a query holding more dates
than a question names reads the first `forms.MAX_READINGS` of them, calls dateparser no more
often however many follow, and its reply says where reading stopped."""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from openmemd.search.dates import forms, offsets, query, spans
from openmemd.search.dates.query import understand_dates

TODAY = dt.date(2026, 12, 7)


class _Counted:
    """A compiled pattern that adds up the characters each `search` is given to look through."""

    def __init__(self, pattern: re.Pattern[str], scanned: list[int]) -> None:
        self._pattern, self._scanned = pattern, scanned

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Any:
        self._scanned.append(max(0, min(endpos, len(text)) - pos))
        return self._pattern.search(text, pos, endpos)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The characters searched by the patterns that look around the dates found (the words
    before a date, the text left between dates), one entry per search."""
    counts: list[int] = []
    for module in (query, spans, offsets):
        for name, value in list(vars(module).items()):
            if isinstance(value, re.Pattern):
                monkeypatch.setattr(module, name, _Counted(value, counts))
    yield counts


def _dates(n: int) -> str:  # n days apart, words between them
    return " ".join(f"Jan {1 + i % 28} and then the next thing we did" for i in range(n))


def test_the_words_around_dates_are_searched_in_linear_time(
        scanned: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forms, "MAX_READINGS", 10_000, raising=False)  # every date read
    found = {}
    for n in (40, 80):
        scanned.clear()
        found[n] = understand_dates(_dates(n), TODAY)
        found[n, "chars"] = sum(scanned)
    assert found[40] is not None and len(found[40].ranges) == 40
    assert found[80] is not None and len(found[80].ranges) == 80
    assert found[80, "chars"] <= 2.2 * found[40, "chars"], found


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real: Callable[[str, dt.date], Any] = forms.parse_words

    def parse(text: str, today: dt.date) -> Any:
        calls.append(text)
        return real(text, today)

    monkeypatch.setattr(forms, "parse_words", parse)
    return calls


def _different_days(n: int) -> str:
    return " ".join(f"Jan {1 + i % 28} {2000 + i // 28}" for i in range(n))


def test_a_query_holding_many_dates_reads_the_first_and_says_where_it_stopped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    read = {}
    for n in (200, 400):
        calls.clear()
        text = _different_days(n)
        read[n] = (understand_dates(text, TODAY), len(calls), text)
    (some, some_calls, text), (more, more_calls, _) = read[200], read[400]
    assert some is not None and more is not None
    assert some_calls == more_calls <= forms.MAX_READINGS  # dateparser: no more for more dates
    assert some.ranges == more.ranges and 0 < len(some.ranges) <= forms.MAX_READINGS
    assert some.ranges[0].start == dt.date(2000, 1, 1)
    assert some.read_until is not None and some.read_until < len(text)
    note = some.to_meta()["note"]
    assert f"first {some.read_until} characters" in note and str(forms.MAX_READINGS) in note
    # what was not read is searched as words
    assert some.query.endswith(text[-20:])


@pytest.mark.parametrize("question", [
    "what happened between March 3 and March 10, 2023, on May 8th and last Friday",
    "Monday, May 8th 2023 to Friday, May 12th 2023 and the week of March 27, 2023",
    "notes from 2023-05-08, 2023-05-09, 2023-05-10, 3月27日 and 上周五"])
def test_a_question_naming_a_handful_of_dates_is_read_whole(question: str) -> None:
    found = understand_dates(question, TODAY)
    assert found is not None and found.read_until is None
    assert "note" not in found.to_meta()


def test_a_list_of_days_is_read_as_far_as_a_months_days_go() -> None:
    """"May 8, 9 and 10" is a list of days; from each number of a run of 40, the pattern used to
    read to the run's end (the square of its length): it reads a month's 31 days at most."""
    found = understand_dates("9, " * 40 + "and 10 May", TODAY)
    assert found is not None and found.ranges[0].end == dt.date(2026, 5, 10)
    assert found.ranges[0].text.count("9") <= 30
