"""Word ranks from the bundled cl100k_base vocabulary (search/commonness.py)."""

from __future__ import annotations

from openmemd.search.commonness import english_rank, specificity


def test_a_word_ranks_by_its_prose_forms_only() -> None:
    assert english_rank("name") == 836  # " name"
    assert english_rank("Name") == english_rank("name")  # the query's case does not matter
    assert english_rank("dentist") == 50351
    assert english_rank("password") == 3636  # the ranks follow frequency only roughly


def test_words_the_vocabulary_cannot_read_have_no_rank() -> None:
    for word in ("zzqxv", "café", "2026", "e5-small", "北京", ""):
        assert english_rank(word) is None
        assert specificity(word) == 1.0
    assert 0.0 < specificity("name") < specificity("dentist") <= 1.0
