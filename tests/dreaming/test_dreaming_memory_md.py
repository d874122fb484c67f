"""MEMORY.md writes never lose an edit made while dreaming runs (issue 9, item 1)."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from openmemd.config import DeepPhaseSettings, DreamingSettings
from openmemd.dreaming import RecallHit, record_recalls, run_sweep
from openmemd.dreaming.lockfile import memory_md_lock
from openmemd.dreaming.memory_write import MemoryFileBusyError, apply_to_memory

UTC = timezone.utc
T0 = datetime(2026, 4, 6, 10, 0, tzinfo=UTC)
NOTE = "memory/2026-04-06.md"
N_FACTS = 40


def easy_settings() -> DreamingSettings:
    """Every recalled line is promotable, so one sweep promotes many candidates."""
    deep = dataclasses.replace(DeepPhaseSettings(), min_score=0.0, min_recall_count=0,
                               min_unique_queries=0, limit=N_FACTS,
                               max_memory_bytes=4 * 1024 * 1024)
    return dataclasses.replace(DreamingSettings(timezone="UTC"), deep=deep)


# An appender grows MEMORY.md past the startup budget while the sweep runs; these tests are
# about not losing its lines, so the budget is out of the way.
BIG = 4 * 1024 * 1024


def make_ws(tmp_path: Path, memory_kb: int = 200) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    facts = [f"- Fact {i}: the service number {i} runs on port {8000 + i}." for i in
             range(N_FACTS)]
    (ws / NOTE).write_text("# Notes\n\n" + "\n".join(facts) + "\n", encoding="utf-8")
    filler = "".join(f"- old long-term line {i} {'x' * 60}\n" for i in range(memory_kb * 14))
    (ws / "MEMORY.md").write_text("# Long-Term Memory\n\n" + filler, encoding="utf-8")
    hits = [RecallHit(NOTE, 3 + i, 3 + i, 0.9, facts[i]) for i in range(N_FACTS)]
    record_recalls(ws, "which ports do the services use", hits, now=T0, timezone="UTC")
    return ws


class Appender(threading.Thread):
    """Appends numbered lines to MEMORY.md in a tight loop, like `echo ... >> MEMORY.md`."""

    def __init__(self, ws: Path, *, locked: bool = False, pause: float = 0.0) -> None:
        super().__init__(daemon=True)
        self.ws, self.locked, self.pause = ws, locked, pause
        self.stop = threading.Event()
        self.lines: list[str] = []

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            line = f"- appended while dreaming #{i}\n"
            if self.locked:
                with memory_md_lock(self.ws):
                    self._append(line)
            else:
                self._append(line)
            self.lines.append(line)
            i += 1
            if self.pause:
                time.sleep(self.pause)

    def _append(self, line: str) -> None:
        with open(self.ws / "MEMORY.md", "a", encoding="utf-8") as handle:
            handle.write(line)


def sweep_while_appending(ws: Path, appender: Appender) -> str:
    appender.start()
    try:
        assert _wait_lines(appender, 5)
        result = run_sweep(ws, easy_settings(), phases="deep", now=T0 + timedelta(hours=2),
                           memory_max_chars=BIG)
        assert len(result.promoted) == N_FACTS
        assert _wait_lines(appender, len(appender.lines) + 5)
    finally:
        appender.stop.set()
        appender.join(10)
    return (ws / "MEMORY.md").read_text("utf-8")


def _wait_lines(appender: Appender, n: int) -> bool:
    deadline = time.monotonic() + 10
    while len(appender.lines) < n and time.monotonic() < deadline:
        time.sleep(0.005)
    return len(appender.lines) >= n


def assert_all_kept(memory: str, appender: Appender) -> None:
    counts: dict[str, int] = {}
    for line in memory.splitlines(True):
        counts[line] = counts.get(line, 0) + 1
    lost = [line for line in appender.lines if counts.get(line, 0) != 1]
    assert len(appender.lines) > 5 and not lost, f"{len(lost)} of {len(appender.lines)} lost"


def test_lines_appended_during_a_sweep_are_not_lost(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    appender = Appender(ws, pause=0.001)
    memory = sweep_while_appending(ws, appender)
    assert_all_kept(memory, appender)
    assert memory.count("openclaw-memory-promotion:") == N_FACTS
    assert memory.startswith("# Long-Term Memory\n\n- old long-term line 0 ")


def test_appends_under_the_memory_lock_are_never_lost(tmp_path: Path) -> None:
    # What `memory_add` does: an O_APPEND write under memory_md_lock.
    ws = make_ws(tmp_path)
    appender = Appender(ws, locked=True)
    memory = sweep_while_appending(ws, appender)
    assert_all_kept(memory, appender)
    assert memory.count("openclaw-memory-promotion:") == N_FACTS


def test_backup_holds_the_content_actually_replaced(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, memory_kb=4)
    appender = Appender(ws, pause=0.001)
    memory = sweep_while_appending(ws, appender)
    backups = sorted((ws / "memory/.dreams/backups").iterdir())
    assert len(backups) == 1
    replaced = backups[0].read_text("utf-8")
    # The replaced file is the new one without the promotion section, up to the moment of the
    # replace (lines appended after it are only in the new file).
    def user_lines(text: str) -> str:
        return "".join(line for line in text.splitlines(True) if "- old" in line
                       or "appended" in line)

    assert "appended while dreaming" in replaced
    assert user_lines(memory).startswith(user_lines(replaced))
    assert replaced.startswith("# Long-Term Memory\n\n- old long-term line 0")
    assert oct(backups[0].stat().st_mode & 0o777) == oct(0o600)


def test_editor_replacing_memory_md_mid_write_is_not_overwritten(tmp_path: Path) -> None:
    # An editor saves by write-to-temp + rename while the promotion is being built: the
    # promotion must be rebuilt from the editor's file, not from what it read first.
    ws = tmp_path
    (ws / "MEMORY.md").write_text("# Long-Term Memory\n\n- first\n", encoding="utf-8")
    calls: list[str] = []

    def build(current: str) -> str:
        calls.append(current)
        if len(calls) == 1:
            tmp = ws / ".MEMORY.md.swp"
            tmp.write_text(current + "- typed in the editor\n", encoding="utf-8")
            os.replace(tmp, ws / "MEMORY.md")
        return current + "\n## Promoted\n- promoted\n"

    result = apply_to_memory(ws, build, backups=2)
    memory = (ws / "MEMORY.md").read_text("utf-8")
    assert len(calls) == 2 and "- typed in the editor\n" in calls[1]
    assert memory == "# Long-Term Memory\n\n- first\n- typed in the editor\n" \
        "\n## Promoted\n- promoted\n"
    assert result.backup is not None
    assert result.backup.read_text("utf-8") == calls[1]


def test_file_rewritten_in_place_mid_write_is_rebuilt(tmp_path: Path) -> None:
    ws = tmp_path
    (ws / "MEMORY.md").write_text("- a\n- b\n", encoding="utf-8")
    calls: list[str] = []

    def build(current: str) -> str:
        calls.append(current)
        if len(calls) == 1:
            (ws / "MEMORY.md").write_text("- a\n", encoding="utf-8")  # truncated and rewritten
        return current + "- promoted\n"

    apply_to_memory(ws, build, backups=0)
    assert (ws / "MEMORY.md").read_text("utf-8") == "- a\n- promoted\n"


def test_memory_md_that_never_settles_gives_a_clear_error_and_is_untouched(
        tmp_path: Path) -> None:
    ws = tmp_path
    (ws / "MEMORY.md").write_text("- a\n", encoding="utf-8")
    generation = [0]

    def build(current: str) -> str:
        generation[0] += 1
        tmp = ws / "editor.tmp"
        tmp.write_text(f"- edit {generation[0]}\n", encoding="utf-8")
        os.replace(tmp, ws / "MEMORY.md")
        return current + "- promoted\n"

    with pytest.raises(MemoryFileBusyError, match="nothing was written"):
        apply_to_memory(ws, build, backups=3)
    assert (ws / "MEMORY.md").read_text("utf-8") == f"- edit {generation[0]}\n"
    assert not list((ws / "memory/.dreams/backups").glob("*")) \
        if (ws / "memory/.dreams/backups").exists() else True
    assert not [p for p in ws.iterdir() if p.name.endswith(".tmp")]


def test_new_memory_md_created_meanwhile_is_not_clobbered(tmp_path: Path) -> None:
    ws = tmp_path
    calls: list[str] = []

    def build(current: str) -> str:
        calls.append(current)
        if len(calls) == 1:
            (ws / "MEMORY.md").write_text("- written by the user\n", encoding="utf-8")
        return current + "- promoted\n"

    apply_to_memory(ws, build, backups=1)
    assert (ws / "MEMORY.md").read_text("utf-8") == "- written by the user\n- promoted\n"


_KILL_CHILD = """
import sys
from pathlib import Path
from openmemd.dreaming.memory_write import apply_to_memory
ws = Path(sys.argv[1])
n = 0
while True:
    n += 1
    apply_to_memory(ws, lambda cur: cur + f"- promoted {n} " + "y" * 2000 + "\\n", backups=2)
"""


def test_kill_9_mid_commit_leaves_a_whole_file_and_no_temp_file_after_the_next_sweep(
        tmp_path: Path) -> None:
    ws = make_ws(tmp_path, memory_kb=400)
    original = (ws / "MEMORY.md").read_text("utf-8")
    for delay in (0.3, 0.45, 0.6, 0.8):
        child = subprocess.Popen([sys.executable, "-c", _KILL_CHILD, str(ws)])
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        memory = (ws / "MEMORY.md").read_text("utf-8")
        assert memory.startswith(original)
        for line in memory[len(original):].splitlines():
            assert line.startswith("- promoted ") and line.endswith("y" * 2000), line[:40]
    run_sweep(ws, easy_settings(), phases="deep", now=T0 + timedelta(hours=2),
                           memory_max_chars=BIG)
    assert not [p for p in ws.iterdir() if p.name.endswith(".tmp")]
    assert (ws / "MEMORY.md").read_text("utf-8").startswith(original)


def test_promotion_made_meanwhile_by_another_writer_is_not_duplicated() -> None:
    from openmemd.dreaming.deep import DeepPlan
    from openmemd.dreaming.memory_md import SectionEntry

    plan = DeepPlan(
        eligible=(), promoted=(), reconciled=(), skipped=(), memory_before="# M\n",
        memory_after="(stale)", size_capped=False, left_for_later=0, updates={}, messages=(),
        sections=(SectionEntry("k1", "fact one", 0.9, 3, 0.7, "memory/a.md:1-1"),
                  SectionEntry("k2", "fact two", 0.9, 3, 0.7, "memory/a.md:2-2")),
        day="2026-04-06")
    # OpenClaw promoted k1 while we were planning (appended, or the file was rewritten).
    for current in ("# M\n<!-- openclaw-memory-promotion:k1 -->\n- fact one\n",
                    "# Mine\n<!-- openclaw-memory-promotion:k1 -->\n- fact one\n"):
        after = plan.apply(current)
        assert after is not None and after.startswith(current)
        assert "promotion:k1" not in after[len(current):]
        assert ("<!-- openclaw-memory-promotion:k2 -->\n- fact two Source: memory/a.md#L2 "
                "[score=") in after
    # The user typed both facts by hand meanwhile: nothing left to add.
    assert plan.apply("# M\n- fact one\n- fact two\n") is None


def test_memory_md_swapped_for_a_symlink_mid_write_is_refused_clearly(tmp_path: Path) -> None:
    from openmemd.dreaming.memory_write import MemoryFileUnreadableError

    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside.md"
    outside.write_text("- not ours\n", encoding="utf-8")
    (ws / "MEMORY.md").write_text("- a\n", encoding="utf-8")

    def build(current: str) -> str:
        (ws / "MEMORY.md").unlink()
        (ws / "MEMORY.md").symlink_to(outside)
        return current + "- promoted\n"

    with pytest.raises(MemoryFileUnreadableError, match="cannot be opened safely"):
        apply_to_memory(ws, build, backups=1)
    assert outside.read_text(encoding="utf-8") == "- not ours\n"
    assert (ws / "MEMORY.md").is_symlink()
