"""A search on a thread-safe reader (PostgreSQL) starts the keyword leg on a worker thread
while the vector leg runs, scores the vector hits the keyword leg missed beside the cosines of
the keyword hits the vector leg missed, and answers exactly as when all runs one after the
other."""

from __future__ import annotations

import threading
import time
from typing import Any

from pg_rows import fill, row, unit

from openmemd.config import QuerySettings
from openmemd.search.pipeline import run_search


class Recording:
    """The real reader, noting which thread runs each keyword call."""

    def __init__(self, inner: Any, *, thread_safe: bool) -> None:
        self.inner = inner
        self.thread_safe = thread_safe
        self.keyword_threads: list[str] = []
        self.relevance_threads: list[str] = []

    def keyword_candidates(self, *args: Any, **kwargs: Any) -> Any:
        self.keyword_threads.append(threading.current_thread().name)
        return self.inner.keyword_candidates(*args, **kwargs)

    def keyword_relevance(self, *args: Any, **kwargs: Any) -> Any:
        self.relevance_threads.append(threading.current_thread().name)
        return self.inner.keyword_relevance(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_legs_run_together_and_agree(pg_store):
    store = pg_store()
    fill(store, {"MEMORY.md": [
        row("a", "MEMORY.md", "Alice adopted a puppy named Rex", unit(1), model="m"),
        row("b", "MEMORY.md", "Bob likes hiking in the Alps", unit(2), model="m"),
        row("c", "MEMORY.md", "Rex the puppy chewed the hiking boots", unit(3), model="m"),
        row("d", "MEMORY.md", "Carol bakes rye bread on Sundays", unit(4), model="m")]})
    args: dict[str, Any] = dict(query_vector=unit(2), model="m", settings=QuerySettings(),
                                max_results=3, min_score=0.0, sources=None, now=time.time(),
                                explain=True)
    together = Recording(store.reader(), thread_safe=True)
    apart = Recording(store.reader(), thread_safe=False)
    first = run_search(together, "puppy hiking", **args)
    second = run_search(apart, "puppy hiking", **args)
    assert together.keyword_threads[0].startswith("openmemd-keyword-leg")
    assert apart.keyword_threads == [threading.current_thread().name]
    # "d" holds no query word: only the vector leg finds it, so its keyword score is looked up
    assert together.relevance_threads[0].startswith("openmemd-keyword-leg")
    assert apart.relevance_threads == [threading.current_thread().name]
    assert first and [(h.path, h.score, h.explain) for h in first] == [
        (h.path, h.score, h.explain) for h in second]


def _relevance_of_a(reader: Any, terms: Any) -> float:
    return float(reader.keyword_relevance(terms, ["a"])["a"])


def test_a_searchs_hit_scores_use_its_keyword_legs_statistics(pg_store):
    """The vector hits' keyword scores are normalised by the keyword leg's best, so they are
    computed from the leg's reading of N, |D| and n(q) even if a write came in between; the
    plan is taken once, and not kept past the search's terms."""
    import gc

    from openmemd.store.base import CandidateFilter
    from openmemd.text.tokens import query_terms

    store = pg_store()
    docs = {"a.md": [row("a", "a.md", "telescope notes from the hill", unit(1))],
            "b.md": [row("b", "b.md", "cleaning the telescope lens", unit(2))]}
    docs.update({f"o{i}.md": [row(f"o{i}", f"o{i}.md", f"garden diary day {i}", unit(10 + i))]
                 for i in range(10)})
    fill(store, docs)
    reader = store.reader()
    terms = query_terms("telescope")
    leg = {c.id: c.measure for c in reader.keyword_candidates(
        terms, limit=5, where=CandidateFilter())}
    assert set(leg) == {"a", "b"}
    more = {f"t{i}.md": [row(f"t{i}", f"t{i}.md", "a telescope for the new observatory dome",
                             unit(30 + i))] for i in range(3)}
    fill(store, more)  # N, the average |D| and n(telescope) all change
    assert _relevance_of_a(reader, terms) == leg["a"]  # the leg's statistics
    fresh = _relevance_of_a(reader, terms)  # taken once: now today's statistics
    assert fresh != leg["a"]

    terms = query_terms("telescope")
    reader.keyword_candidates(terms, limit=5, where=CandidateFilter())
    kept = _relevance_of_a(reader, terms)
    assert kept == fresh  # nothing was written since
    reader.keyword_candidates(terms, limit=5, where=CandidateFilter())
    del terms  # the search is over: its plan goes with its terms
    gc.collect()
    fill(store, {"u.md": [row("u", "u.md", "telescope", unit(50))]})
    assert _relevance_of_a(reader, query_terms("telescope")) != kept
