"""The views' pure parts: a hit's lines and its link to the note, a cited range."""

import re

from openmemd.dashboard import pages
from openmemd.dashboard.web import environment, static_file
from openmemd.protocol.replies import (
    DeepReport,
    DemoteReply,
    DreamResult,
    DreamsFileText,
    DreamsReply,
    Hit,
    LightReport,
    Lines,
    MemoryEntry,
    MemoryReply,
    Promoted,
    RemReport,
)
from openmemd.protocol.requests import DemoteRequest, DreamsRequest, MemoryRequest, UndoRequest


def hit(**kw):
    values = dict(path="memory/2026-01-02.md", start_line=3, end_line=5, score=0.5,
                  snippet="a\nb\nc", source="memory")
    values.update(kw)
    return Hit(**values)


def test_hit_lines_mark_the_focus():
    lines = pages.hit_lines(hit(focus=Lines(4, 4)))
    assert [(line.number, line.text, line.marked) for line in lines] == [
        (3, "a", False), (4, "b", True), (5, "c", False)]
    assert all(line.marked for line in pages.hit_lines(hit()))  # no focus: the whole hit


def test_note_link_cites_the_focus():
    assert pages.note_link(hit(focus=Lines(4, 5))) == \
        "/note?path=memory%2F2026-01-02.md&lines=4-5#L4-L5"
    assert pages.note_link(hit(), "work").endswith("&agent=work#L3-L5")


def test_parse_range():
    assert pages.parse_range("3-5") == (3, 5)
    assert pages.parse_range("7") == (7, 7)
    for bad in ("", "x", "5-3", "0-2", "-1", "3-x"):
        assert pages.parse_range(bad) is None, bad


def test_templates_escape_what_they_show():
    html = environment().get_template("error.html").render(
        title="t", message="<script>alert(1)</script>", csrf="c")
    assert "<script>alert" not in html and "&lt;script&gt;" in html


def test_static_files_ship_and_nothing_else_is_served():
    assert b"--mark" in (static_file("style.css") or b"")
    assert static_file("note.js") is not None
    for bad in ("../web.py", "../templates/base.html", ".hidden.css", "missing.css", "x.py"):
        assert static_file(bad) is None, bad


# -- the Memory and Dreams pages, rendered from typed replies --------------------------------

PROMOTED = MemoryEntry(
    kind="promoted", line=5, text="The router needs the VLAN 42 tag.", key="k1", digest="d1",
    section="## Promoted From Short-Term Memory (2026-04-10)", source="memory/a.md#L5-L6",
    score=0.912, recalls=10, avg_score=0.72, promoted_at="2026-04-10T05:00:00Z",
    queries=("vlan <tag>", "router"), recall_days=("2026-04-06", "2026-04-07"))
MEMORY = MemoryReply(path="MEMORY.md", exists=True, chars=5000, size=5000, budget_chars=20000,
                     entries=(MemoryEntry(kind="heading", line=1, text="# Memory"),
                              MemoryEntry(kind="note", line=3, text="- Ana <likes> tea."),
                              PROMOTED))


class Answers:
    """A handler answering the Memory ops from typed replies, and recording what it was asked."""

    def __init__(self, error: Exception | None = None) -> None:
        self.asked: list[object] = []
        self.error = error

    def __call__(self, request):
        self.asked.append(request)
        if self.error is not None:
            raise self.error
        if isinstance(request, MemoryRequest):
            return MEMORY
        if isinstance(request, DreamsRequest):
            return DREAMS
        return DemoteReply(key=request.key, archive="memory/archive.md", memory_chars=10)


def render(page: pages.Page) -> str:
    return environment().get_template(page.template).render(**page.values, csrf="CSRF")


def test_memory_page_shows_each_entry_with_its_provenance_and_a_demote_form():
    html = render(pages.memory_page(Answers(), {}))
    assert "5000 of 20000 characters (25% of the bootstrap budget)" in html
    assert "Ana &lt;likes&gt; tea." in html and "<h2" in html
    assert 'href="/note?path=memory%2Fa.md&amp;lines=5-6#L5-L6"' in html
    assert "2026-04-10T05:00:00Z" in html and "0.912" in html and "<q>vlan &lt;tag&gt;</q>" in html
    demote = re.search(r'<form method="post" action="/memory/demote".*?</form>', html, re.S)
    assert demote is not None
    for name, value in (("csrf", "CSRF"), ("key", "k1"), ("digest", "d1")):
        assert f'name="{name}" value="{value}"' in demote.group(0)
    assert "/memory/undo" not in html and 'class="error' not in html


def test_after_a_demotion_the_page_offers_undo_and_shows_errors_as_one_line():
    html = render(pages.memory_page(Answers(), {"done": "demoted", "key": "k1"}))
    undo = re.search(r'<form method="post" action="/memory/undo".*?</form>', html, re.S)
    assert undo is not None and 'name="key" value="k1"' in undo.group(0)
    assert 'name="csrf" value="CSRF"' in undo.group(0)
    html = render(pages.memory_page(Answers(), {"done": "<evil>", "error": "x" * 1000}))
    assert "<evil>" not in html and "x" * 300 + "<" in html


def test_demote_and_undo_actions_send_typed_requests_and_say_where_to_go():
    answers = Answers()
    assert pages.demote_action(answers, {"key": "k1", "digest": "d1"}) == \
        "/memory?done=demoted&key=k1"
    assert pages.undo_action(answers, {"key": "k1", "agent": "work"}) == \
        "/memory?done=undone&key=k1&agent=work"
    assert answers.asked == [DemoteRequest("k1", digest="d1"), UndoRequest("k1", agent="work")]
    assert {"/memory/demote": pages.demote_action,
                             "/memory/undo": pages.undo_action} == pages.ACTIONS


def test_source_link():
    assert pages.source_link("memory/a.md#L5") == "/note?path=memory%2Fa.md&lines=5-5#L5-L5"
    assert pages.source_link("a.md") == "/note?path=a.md"
    assert pages.source_link(None) is None


DREAMS = DreamsReply(
    diary=DreamsFileText(path="DREAMS.md", phase=None, day=None, text="# Dreams\n<i>x</i>"),
    reports=(DreamsFileText(path="memory/dreaming/deep/2026-04-10.md", phase="deep",
                            day="2026-04-10", text="deep report new"),
             DreamsFileText(path="memory/dreaming/deep/2026-04-09.md", phase="deep",
                            day="2026-04-09", text="deep report old")),
    tonight=DreamResult(
        workspace="/w", day="2026-04-11", timezone="UTC", started_at="t", dry_run=True,
        phases=("light", "rem", "deep"), light=LightReport(), rem=RemReport(),
        deep=DeepReport(eligible=1),
        promoted=(Promoted(key="k2", path="memory/b.md", start_line=3, end_line=3,
                           text="Zora was born in March.", score=0.845, components={},
                           phase_boost=0.0, recalls=4, daily_signals=0, avg_score=0.7,
                           queries=3, days=2),)))


def test_dreams_page_shows_the_files_newest_first_and_the_dry_run():
    html = render(pages.dreams_page(Answers(), {}))
    assert "&lt;i&gt;x&lt;/i&gt;" in html
    assert html.index("deep report new") < html.index("deep report old")
    row = re.search(r'<tr class="would-promote">.*?</tr>', html, re.S)
    assert row is not None and "0.845" in row.group(0) and "Zora was born" in row.group(0)
    assert "lines=3-3" in row.group(0) and "1 would be promoted" in html


def test_the_status_page_follows_a_fill_live_and_stops_when_it_is_done():
    from openmemd.protocol.status import AgentStatus, DaemonStatus, IndexerStatus

    def page(progress: dict | None) -> str:
        indexer = IndexerStatus.from_json({"state": "filling", "progress": progress})
        status = DaemonStatus(running=True, health="ok",
                              agents=(AgentStatus("main", indexer=indexer),))
        return render(pages.status_page(lambda request: status, {}))

    busy = page({"phase": "vectors", "done": 3, "total": 9, "rate": 1.5, "etaSeconds": 4})
    assert '<meta http-equiv="refresh" content="2">' in busy and "ETA 4 s" in busy
    assert "http-equiv" not in page(None)
