"""The promotion grammar (text/promotion.py): what deep dreaming writes reads back the same
everywhere: the archive move, the duplicate check, search's copies."""

from __future__ import annotations

from openmemd.dreaming.memory_md import SectionEntry, build_section
from openmemd.text.promotion import (
    SECTION,
    SourceLines,
    annotated_sources,
    entry_recalls,
    marker_key,
    without_annotation,
)


def test_an_entry_as_written_reads_back() -> None:
    entry = SectionEntry("memory:memory/2026-06-12.md:3:4", "Ana owns the queue migration.",
                         0.8612, 4, 0.7021, "memory/2026-06-12.md:3-4")
    section = build_section([entry], "2026-06-20").split("\n")
    assert section[:3] == ["", "## Promoted From Short-Term Memory (2026-06-20)", ""]
    assert SECTION.match(section[1])
    mark, bullet = section[3], section[4]
    assert mark == "<!-- openclaw-memory-promotion:memory:memory/2026-06-12.md:3:4 -->"
    assert bullet == ("- Ana owns the queue migration. Source: memory/2026-06-12.md#L3-L4 "
                      "[score=0.861 recalls=4 avg=0.702 source=memory/2026-06-12.md:3-4]")
    assert marker_key(mark) == "memory:memory/2026-06-12.md:3:4"
    assert entry_recalls(bullet) == 4 and entry_recalls(mark) is None
    assert annotated_sources("\n".join(section)) == [SourceLines("memory/2026-06-12.md", 3, 4)]
    assert without_annotation(bullet) == ("- Ana owns the queue migration. Source: "
                                          "memory/2026-06-12.md#L3-L4")


def test_lines_that_only_look_like_an_entry_are_not_one() -> None:
    tail = " [score=0.9 recalls=3 avg=0.8 source=memory/a.md:1-2]"
    assert entry_recalls("* starred" + tail) is None  # OpenClaw's bullet is "- "
    assert entry_recalls("- moved" + tail + " and more") is None  # the annotation ends it
    assert marker_key("text <!-- openclaw-memory-promotion:k -->") is None  # not alone
    assert marker_key("<!-- openclaw-memory-promotion: -->") is None
    assert annotated_sources("[score=0.9 recalls=3 avg=0.8 source=no-span]") == []
    # a path holding a colon keeps it: the span is what follows the last one
    assert annotated_sources(tail.replace("memory/a.md", "c:/notes/a.md")) == [
        SourceLines("c:/notes/a.md", 1, 2)]
