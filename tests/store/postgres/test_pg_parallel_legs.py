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
