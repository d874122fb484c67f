"""`get` takes every citation search prints (path, `path#Lx`, `path#Lx-Ly`, `path:x-y`) and
reads a transcript hit as the message lines the index holds (masked), never the raw JSONL."""

import json

import pytest

from openmemd.api import MemoryIndex
from openmemd.errors import BadRequestError, ForbiddenError, NotFoundError

NOTE = "".join(f"line {n}\n" for n in range(1, 31))  # a 30-line file


def _message(role: str, text: str) -> str:
    return json.dumps({"type": "message", "message": {"role": role, "content": text}})


@pytest.fixture
def index(make_settings, workspace):
    (workspace / "memory" / "2026-06-20.md").write_text(NOTE)
    sessions = workspace / "sessions"
    sessions.mkdir()
    (sessions / "chat.jsonl").write_text("\n".join([
        json.dumps({"type": "session", "id": "s1"}),
        _message("user", "Which ferry goes to the island of Vlieland?"),
        json.dumps({"type": "tool", "output": "raw tool output, never indexed"}),
        _message("assistant", "The ferry from Harlingen; the key is sk-abcdefghijklmnop1234."),
        "{torn",
        _message("user", "Thanks!"),
    ]) + "\n")
    with MemoryIndex.open(workspace, config=make_settings(
            'sources = ["memory", "sessions"]\n')) as ix:
        ix.sync()
        yield ix


@pytest.mark.parametrize("ref", ["memory/2026-06-20.md:3-5", "memory/2026-06-20.md#L3-L5",
                                 "memory/2026-06-20.md#L3-5"])
def test_a_cited_range_reads_those_lines(index, ref):
    got = index.get(ref)
    assert got == {"path": "memory/2026-06-20.md", "text": "line 3\nline 4\nline 5",
                   "from": 3, "lines": 3, "totalLines": 30}


def test_a_single_line_citation_and_explicit_range_wins(index):
    assert index.get("memory/2026-06-20.md#L7")["text"] == "line 7"
    assert index.get("memory/2026-06-20.md:7")["text"] == "line 7"
    # from/lines given as well replace the citation's range as a whole
    got = index.get("memory/2026-06-20.md#L3-L5", from_line=10, lines=2)
    assert got["text"] == "line 10\nline 11" and got["from"] == 10
    assert index.get("memory/2026-06-20.md#L3-L5", lines=1)["text"] == "line 1"


def test_a_range_past_the_end_says_how_long_the_file_is(index):
    with pytest.raises(BadRequestError, match=r"memory/2026-06-20.md has 30 lines; line 999 "
                                              r"is past its end"):
        index.get("memory/2026-06-20.md", from_line=999)
    with pytest.raises(BadRequestError, match="has 30 lines"):
        index.get("memory/2026-06-20.md#L31-L40")
    assert index.get("memory/2026-06-20.md", from_line=30)["text"] == "line 30"
    with pytest.raises(BadRequestError, match=r"ends .* before it starts"):
        index.get("memory/2026-06-20.md:5-3")


def test_a_transcript_hit_reads_as_its_indexed_message_lines(index):
    (hit,) = [h for h in index.search("ferry Vlieland Harlingen", min_score=0)
              if h.source == "sessions"]
    assert hit.path == "sessions/chat.jsonl" and hit.citation == "sessions/chat.jsonl#L2-L6"
    got = index.get(hit.citation)
    assert got["path"] == "sessions/chat.jsonl" and got["lineNumbers"] == [2, 4, 6]
    assert got["text"].splitlines() == [
        "User: Which ferry goes to the island of Vlieland?",
        "Assistant: The ferry from Harlingen; the key is sk-abc…1234.", "User: Thanks!"]
    assert "sk-abcdefghijklmnop1234" not in got["text"]  # masked as indexed
    assert "raw tool output" not in got["text"] and '"type"' not in got["text"]
    assert got["totalLines"] == 6 and got["from"] == 2
    # the text equals what the index holds for that chunk
    assert got["text"] == hit.snippet
    assert index.get("sessions/chat.jsonl#L4")["text"].startswith("Assistant: The ferry")
    assert index.get("sessions/chat.jsonl", from_line=5, lines=2)["lineNumbers"] == [6]
    with pytest.raises(BadRequestError, match="has 6 lines"):
        index.get("sessions/chat.jsonl", from_line=999)


def test_transcripts_stay_within_their_bounds(make_settings, workspace, index, tmp_path):
    with pytest.raises(NotFoundError, match="no such transcript"):
        index.get("sessions/other.jsonl")
    outside = tmp_path / "outside.jsonl"
    outside.write_text(_message("user", "secret outside") + "\n")
    (workspace / "sessions" / "link.jsonl").symlink_to(outside)
    with pytest.raises(NotFoundError):
        index.get("sessions/link.jsonl")
    for bad in ("sessions/sessions.json", "sessions/../sessions/chat.jsonl.bak"):
        with pytest.raises(ForbiddenError):
            index.get(bad)
    # transcripts not indexed: not readable either
    with MemoryIndex.open(workspace, config=make_settings()) as memory_only, \
            pytest.raises(ForbiddenError, match="only Markdown"):
        memory_only.get("sessions/chat.jsonl#L2")
