"""The Memory view's ops through the local handler: MEMORY.md entry by entry with why each
promoted entry is there, a demotion to the archive note, and its undo (byte for byte)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_dreaming_sweep import NOTE, NOTE_TEXT, SWEEP_AT, recall_often, settings

from openmemd.api.handler import LocalHandler
from openmemd.dreaming import run_sweep
from openmemd.dreaming.demotion import DEMOTED_PATH
from openmemd.errors import BadRequestError, NotFoundError
from openmemd.protocol.replies import DemoteReply, DreamsReply, MemoryReply, expect
from openmemd.protocol.requests import DemoteRequest, DreamsRequest, MemoryRequest, UndoRequest

USER_TOP = "# Long-Term Memory\n\n- I prefer tea.\n"


@pytest.fixture
def promoted(workspace: Path, make_settings) -> tuple[Path, LocalHandler]:
    (workspace / NOTE).write_text(NOTE_TEXT, encoding="utf-8")
    (workspace / "MEMORY.md").write_text(USER_TOP, encoding="utf-8")
    recall_often(workspace)
    assert len(run_sweep(workspace, settings(), now=SWEEP_AT).promoted) == 1  # a real promotion
    return workspace, LocalHandler(make_settings())


def _view(handler: LocalHandler) -> MemoryReply:
    return expect(handler(MemoryRequest()), MemoryReply)


def test_memory_lists_entries_with_their_provenance(promoted) -> None:
    ws, handler = promoted
    view = _view(handler)
    assert view.exists and view.budget_chars == 20_000
    assert view.chars == len((ws / "MEMORY.md").read_text(encoding="utf-8"))
    kinds = [e.kind for e in view.entries]
    assert kinds == ["heading", "note", "heading", "promoted"]
    entry = view.entries[-1]
    assert "gateway router needs the VLAN 42 tag" in entry.text
    assert "[score=" not in entry.text and "Source:" not in entry.text
    assert entry.source == f"{NOTE}#L5" and (entry.recalls or 0) >= 5 and entry.score
    assert entry.promoted_at and entry.section and entry.section.startswith("## Promoted")
    assert sorted(entry.queries) == [f"q{i} {NOTE}:5" for i in range(1, 6)]
    assert len(entry.recall_days) == 5 and entry.digest


def test_demote_moves_the_entry_and_undo_restores_memory_md_byte_for_byte(promoted) -> None:
    ws, handler = promoted
    memory = ws / "MEMORY.md"
    before = memory.read_bytes()
    entry = _view(handler).entries[-1]
    assert entry.key is not None
    moved = expect(handler(DemoteRequest(entry.key, digest=entry.digest)), DemoteReply)
    after = memory.read_text(encoding="utf-8")
    assert entry.key not in after and "VLAN 42" not in after
    assert after == USER_TOP  # the emptied promotion section goes with it
    archived = (ws / moved.archive).read_text(encoding="utf-8")
    assert entry.key in archived and "VLAN 42" in archived
    assert [e.kind for e in _view(handler).entries] == ["heading", "note"]

    back = expect(handler(UndoRequest(entry.key)), DemoteReply)
    assert back.exact and memory.read_bytes() == before
    assert not (ws / moved.archive).exists()  # the archive note the demotion made is gone
    with pytest.raises(NotFoundError, match="no demotion"):
        handler(UndoRequest(entry.key))


def test_undo_after_an_edit_puts_the_entry_back_in_its_section(promoted) -> None:
    ws, handler = promoted
    memory = ws / "MEMORY.md"
    entry = _view(handler).entries[-1]
    assert entry.key is not None
    handler(DemoteRequest(entry.key))
    with memory.open("a", encoding="utf-8") as f:
        f.write("- Added by hand meanwhile.\n")
    back = expect(handler(UndoRequest(entry.key)), DemoteReply)
    text = memory.read_text(encoding="utf-8")
    assert not back.exact and "- Added by hand meanwhile." in text
    assert entry.key in text and text.index(entry.section or "") < text.index(entry.key)
    assert [e.key for e in _view(handler).entries if e.kind == "promoted"] == [entry.key]


def test_demote_of_a_changed_or_unknown_entry_is_refused_and_moves_nothing(promoted) -> None:
    ws, handler = promoted
    memory = ws / "MEMORY.md"
    entry = _view(handler).entries[-1]
    assert entry.key is not None
    before = memory.read_bytes()
    with pytest.raises(NotFoundError, match="no promoted entry 'nope'"):
        handler(DemoteRequest("nope"))
    with pytest.raises(BadRequestError, match="changed since it was listed") as info:
        handler(DemoteRequest(entry.key, digest="0" * 16))
    assert "\n" not in str(info.value)
    memory.write_bytes(before.replace(b"VLAN 42 tag", b"VLAN 43 tag"))  # the user edits it
    with pytest.raises(BadRequestError, match="changed since"):
        handler(DemoteRequest(entry.key, digest=entry.digest))
    assert memory.read_bytes() == before.replace(b"VLAN 42 tag", b"VLAN 43 tag")
    assert not (ws / "memory" / "archive").exists() and not (ws / DEMOTED_PATH).exists()


def test_dreams_lists_the_reports_newest_first_and_tonights_dry_run(promoted) -> None:
    ws, handler = promoted
    (ws / "memory" / "dreaming" / "deep" / "2026-01-01.md").write_text("# old\n")
    reply = expect(handler(DreamsRequest()), DreamsReply)
    assert reply.diary is not None and reply.diary.path == "DREAMS.md"
    days = [r.day for r in reply.reports]
    assert days == sorted(days, reverse=True) and days[-1] == "2026-01-01"
    assert {r.phase for r in reply.reports} == {"light", "rem", "deep"}
    assert reply.tonight.dry_run is True
