"""The startup context fitted within a host's limit (`context.fit`, the `maxChars` request
parameter): the daily notes first, today's before yesterday's, then USER.md and MEMORY.md in
OpenClaw's order, cut at a line with the usual marker; never over the limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from openmemd.context import MAX_CHARS_BUDGET, startup_context

TODAY, YESTERDAY = "2026-12-01", "2026-11-30"


def write(ws: Path, rel: str, text: str) -> None:
    (ws / rel).parent.mkdir(parents=True, exist_ok=True)
    (ws / rel).write_text(text, encoding="utf-8")


def facts(n: int, what: str = "fact") -> str:
    return "".join(f"- {what} number {i} about the project\n" for i in range(n))


@pytest.fixture
def ctx(make_settings, workspace: Path):
    def build(max_chars: int | None, toml: str = ""):
        return startup_context(workspace, make_settings(toml), TODAY, max_chars)

    return build


def by_path(c) -> dict[str, str]:
    return {f.path: f.text for f in c.files}


def test_a_block_within_the_limit_is_left_as_it_is(ctx, workspace: Path) -> None:
    write(workspace, "MEMORY.md", facts(3))
    write(workspace, f"memory/{TODAY}.md", "call the plumber\n")
    whole = ctx(None)
    assert ctx(len(whole.text)) == whole


def test_a_long_memory_md_is_cut_and_the_days_kept(ctx, workspace: Path) -> None:
    write(workspace, "USER.md", "Name: Ann\n")
    write(workspace, "MEMORY.md", facts(400))  # 14,000 characters: within its own budget
    write(workspace, f"memory/{TODAY}.md", "call the plumber\n")
    write(workspace, f"memory/{YESTERDAY}.md", "paid the rent\n")
    c = ctx(4000)
    assert len(c.text) <= 4000 and len(c.text) > 3900  # filled, not emptied
    shown = by_path(c)
    assert shown["USER.md"] == "Name: Ann"  # OpenClaw's order: USER.md before MEMORY.md
    assert shown[f"memory/{TODAY}.md"] == "call the plumber"
    assert shown[f"memory/{YESTERDAY}.md"] == "paid the rent"
    memory = next(f for f in c.files if f.path == "MEMORY.md")
    assert memory.text.startswith("- fact number 0 ") and memory.text.endswith("project")
    assert memory.cut_by == (MAX_CHARS_BUDGET,) and c.to_dict()["truncated"] is True
    assert memory.marker() in c.text  # "[… truncated: N more characters in MEMORY.md]"
    assert memory.omitted_chars == len(facts(400).strip()) - len(memory.text)
    # still in OpenClaw's order in the block
    assert c.text.index("Name: Ann") < c.text.index("fact number 0") < c.text.index("plumber")


def test_when_the_days_alone_do_not_fit_yesterday_goes_before_today(ctx,
                                                                   workspace: Path) -> None:
    write(workspace, "MEMORY.md", facts(50))
    write(workspace, f"memory/{TODAY}.md", facts(80, "today"))  # over the limit alone
    write(workspace, f"memory/{YESTERDAY}.md", facts(40, "yesterday"))
    c = ctx(2500, "[context]\ndaily_total_max_chars = 50000\n")
    assert len(c.text) <= 2500
    shown = by_path(c)
    # cut to nothing, or inside its first line (context.py's rule for a line over a budget)
    assert "number 1 " not in shown["MEMORY.md"] + shown[f"memory/{YESTERDAY}.md"]
    assert shown[f"memory/{TODAY}.md"].startswith("- today number 0 ")
    assert "today number 30 " in shown[f"memory/{TODAY}.md"]
    # a file cut whole still says it is there, to be searched
    assert "[… truncated: " in c.text and "more characters in MEMORY.md]" in c.text


def test_files_that_do_not_fit_even_as_a_marker_are_left_out(ctx, workspace: Path) -> None:
    write(workspace, "MEMORY.md", facts(50))
    for n in range(30):  # many slugged notes of today: their tags alone are over the limit
        write(workspace, f"memory/{TODAY}-topic{n:02}.md", f"note {n}\n")
    c = ctx(1500)
    assert len(c.text) <= 1500
    assert c.files and all(f.kind == "daily" for f in c.files)
    assert c.files[0].path == f"memory/{TODAY}-topic00.md"


def test_a_neutralised_tag_counts_at_its_rendered_length(ctx, workspace: Path) -> None:
    # `<memory-file` in a note is rendered `&lt;memory-file`: longer than on disk
    write(workspace, "MEMORY.md", "<memory-file>\n" * 500)
    c = ctx(2000)
    assert len(c.text) <= 2000 and "&lt;memory-file>" in c.text
