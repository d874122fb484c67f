"""`MemoryIndex.warm` (run by the daemon before it serves) leaves nothing for the first search to
load: the word ranks evidence weighs query terms by are read there, not in a request thread."""

from __future__ import annotations

from openmemd.api import MemoryIndex
from openmemd.search import commonness


def test_warm_reads_the_word_ranks(make_settings, workspace) -> None:
    commonness._word_ranks.cache_clear()
    with MemoryIndex.open(workspace, config=make_settings()) as index:  # keyword-only too
        index.warm()
    assert commonness._word_ranks.cache_info().currsize == 1
    assert commonness.specificity("dentist") > commonness.specificity("name")
