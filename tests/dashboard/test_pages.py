"""The views' pure parts: a hit's lines and its link to the note, a cited range."""

from openmemd.dashboard import pages
from openmemd.dashboard.web import environment, static_file
from openmemd.protocol.replies import Hit, Lines


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
