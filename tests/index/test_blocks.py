"""Long-term files chunked by Markdown block (index/blocks.py), with the real tokenizer, and
what the index makes of it (keyword-only: no model needed)."""

from __future__ import annotations

from openmemd.api import MemoryIndex
from openmemd.index import tiktoken_offline
from openmemd.index.blocks import block_ranges, chunk_blocks

MEMORY = """# Memory

## Work

- The user prefers TypeScript to JavaScript for new projects.
- Deploys are frozen on Fridays
  after 15:00 (a wrapped line).
1. Numbered facts count too.

A paragraph of two
lines.

| tool | use |
|---|---|
| Neovim | editor |

```
- not an item, inside a fence

still the fence
```
<!-- openclaw-memory-promotion:memory:memory/2026-06-12.md:3:3 -->
- Ana owns the queue migration. Source: memory/2026-06-12.md#L3-L3

## Trailing heading
"""


def test_each_fact_is_a_block_and_headings_and_markers_join_the_next() -> None:
    lines = MEMORY.split("\n")
    got = ["\n".join(lines[a:b + 1]) for a, b in block_ranges(lines)]
    assert got == [
        "# Memory\n\n## Work\n\n- The user prefers TypeScript to JavaScript for new projects.",
        "- Deploys are frozen on Fridays\n  after 15:00 (a wrapped line).",
        "1. Numbered facts count too.",
        "A paragraph of two\nlines.",
        "| tool | use |\n|---|---|\n| Neovim | editor |",
        "```\n- not an item, inside a fence\n\nstill the fence\n```",
        "<!-- openclaw-memory-promotion:memory:memory/2026-06-12.md:3:3 -->\n"
        "- Ana owns the queue migration. Source: memory/2026-06-12.md#L3-L3",
        "## Trailing heading",
    ]


def test_a_chunk_holds_exactly_its_lines_and_a_long_block_is_split() -> None:
    enc = tiktoken_offline.get_encoding()
    long_item = "- " + " ".join(f"word{i}" for i in range(300))
    text = MEMORY + long_item + "\n"
    chunks = chunk_blocks(text, tokens=64, overlap=8, encode=enc.encode_ordinary,
                          decode_bytes=enc.decode_bytes)
    lines = text.split("\n")
    for c in chunks:
        if c.start_line != len(lines) - 1:  # the long line's pieces are parts of one line
            assert c.text == "\n".join(lines[c.start_line - 1:c.end_line])
    pieces = [c for c in chunks if c.start_line == c.end_line == len(lines) - 1]
    assert len(pieces) > 1 and "".join(p.text for p in pieces).startswith("- word0 word1")


def test_memory_md_gets_a_chunk_per_fact_and_daily_notes_keep_their_windows(
        make_settings, workspace) -> None:
    (workspace / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (workspace / "memory" / "2026-01-02.md").write_text("- one\n- two\n- three\n")
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        assert index.sync().chunks == 8 + 1
        hit = index.search("deploys frozen fridays")[0]
        assert (hit.path, hit.start_line, hit.end_line) == ("MEMORY.md", 6, 7)
        assert index.search("three")[0].citation.startswith("memory/2026-01-02.md#L")


def test_an_index_chunked_before_blocks_is_rebuilt_once(make_settings, workspace) -> None:
    (workspace / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        index.sync()
        writer = index._maintainer.store.writer()
        meta = writer.read_meta()
        assert meta is not None and meta.pop("chunkUnits") == "blocks-v1"
        with writer.transaction():
            writer.write_meta(meta)  # as an index written before the blocks rule
        assert index.needs_reindex() == ["chunkUnits"]
        assert index.sync().reindexed and index.needs_reindex() == []
