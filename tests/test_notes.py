"""Appending notes (`memory_add`, the `add` op, `openmemd add`): one append, never a rewrite."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest

from helpers import fill_filesystem, mount_tmpfs, wait_for
from openmemd.errors import BadRequestError, ForbiddenError
from openmemd.notes import MAX_NOTE_BYTES, append_note

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=timezone.utc)


def lines_of(path: Path, start: int, end: int) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[start - 1:end]


def test_daily_note_is_created_with_its_heading_and_cited_lines(workspace: Path) -> None:
    note = append_note(workspace, "Release is on Friday", "daily", tz_name="UTC", now=NOW)
    daily = workspace / "memory" / "2026-03-04.md"
    assert daily.read_text() == "# 2026-03-04\n\n- Release is on Friday\n"
    assert (note.path, note.start_line, note.end_line) == ("memory/2026-03-04.md", 3, 3)
    assert note.citation == "memory/2026-03-04.md#L3"
    second = append_note(workspace, "line one\n\nline two\r\nline three", "daily", tz_name="UTC",
                         now=NOW)
    assert lines_of(daily, second.start_line, second.end_line) == [
        "- line one", "", "  line two", "  line three"]
    assert second.to_dict()["citation"] == "memory/2026-03-04.md#L4-L7"


def test_long_term_note_keeps_existing_text_and_adds_a_missing_final_newline(
        workspace: Path) -> None:
    memory = workspace / "MEMORY.md"
    memory.write_bytes(b"# Memory\n\nno newline at the end")
    note = append_note(workspace, "Alice prefers tea", "long-term")
    assert memory.read_bytes() == b"# Memory\n\nno newline at the end\n- Alice prefers tea\n"
    assert (note.path, note.start_line) == ("MEMORY.md", 4)
    assert lines_of(memory, note.start_line, note.end_line) == ["- Alice prefers tea"]


def test_new_memory_md_gets_the_dreaming_header(workspace: Path) -> None:
    note = append_note(workspace, "fact", "long-term")
    assert (workspace / "MEMORY.md").read_text() == "# Long-Term Memory\n\n- fact\n"
    assert note.start_line == 3


@pytest.mark.parametrize(("text", "target", "message"), [
    ("", "daily", "must not be empty"),
    ("  \n\t ", "daily", "must not be empty"),
    ("x" * (MAX_NOTE_BYTES + 1), "daily", "at most 4096 bytes"),
    ("é" * (MAX_NOTE_BYTES // 2 + 1), "daily", "at most 4096 bytes"),  # bytes, not characters
    ("a\x00b", "daily", "NUL"),
    (42, "daily", "must be a string"),
    ("fine", "weekly", "target must be one of daily, long-term"),
])
def test_bad_notes_are_refused_and_write_nothing(workspace: Path, text: object, target: str,
                                                 message: str) -> None:
    with pytest.raises(BadRequestError, match=message):
        append_note(workspace, text, target)
    assert sorted(p.name for p in workspace.rglob("*") if p.is_file()) == []


def test_a_symlinked_memory_md_is_never_written_through(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("keep\n")
    (workspace / "MEMORY.md").symlink_to(outside)
    with pytest.raises(ForbiddenError):
        append_note(workspace, "leak", "long-term")
    assert outside.read_text() == "keep\n"


def test_concurrent_adds_from_threads_and_processes_lose_nothing(workspace: Path) -> None:
    script = textwrap.dedent(f"""
        import sys
        from openmemd.notes import append_note
        for i in range(15):
            append_note({str(workspace)!r}, f"proc {{sys.argv[1]}} note {{i}}", "long-term")
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(n)]) for n in range(2)]
    errors: list[BaseException] = []
    cited: list[tuple[str, int, int]] = []

    def worker(n: int) -> None:
        try:
            for i in range(15):
                note = append_note(workspace, f"thread {n} note {i}", "long-term")
                cited.append((f"- thread {n} note {i}", note.start_line, note.end_line))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert [p.wait(60) for p in procs] == [0, 0]
    assert errors == []
    bullets = [line for line in (workspace / "MEMORY.md").read_text().splitlines()
               if line.startswith("- ")]
    expected = ([f"- thread {n} note {i}" for n in range(3) for i in range(15)]
                + [f"- proc {n} note {i}" for n in range(2) for i in range(15)])
    assert sorted(bullets) == sorted(expected)  # each exactly once, none torn
    memory = workspace / "MEMORY.md"
    assert all(lines_of(memory, start, end) == [text] for text, start, end in cited)


def test_add_waits_for_the_dreaming_lock_held_by_another_process(workspace: Path) -> None:
    (workspace / "MEMORY.md").write_text("# Memory\n")
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from openmemd.dreaming.lockfile import memory_md_lock
        with memory_md_lock(Path({str(workspace)!r})):
            print("held", flush=True)
            sys.stdin.readline()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        done = threading.Event()
        thread = threading.Thread(target=lambda: (append_note(workspace, "after the sweep",
                                                              "long-term"), done.set()))
        thread.start()
        assert not done.wait(0.5)  # blocked while dreaming holds the lock
        assert (workspace / "MEMORY.md").read_text() == "# Memory\n"
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert wait_for(done.is_set, 30)
        assert (workspace / "MEMORY.md").read_text() == "# Memory\n- after the sweep\n"
    finally:
        holder.kill()
        holder.wait(10)


def test_a_short_write_on_a_full_disk_leaves_the_file_as_it_was(workspace: Path) -> None:
    memory = workspace / "MEMORY.md"
    memory.write_text("# Memory\n\n- old fact\n")
    size = memory.stat().st_size
    # RLIMIT_FSIZE makes the write stop part-way, like a disk filling up during it.
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import resource, signal
        from openmemd.errors import UnavailableError
        from openmemd.notes import append_note
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({size} + 10, {size} + 10))
        try:
            append_note({str(workspace)!r}, "a note far longer than ten bytes", "long-term")
        except UnavailableError as exc:
            print("refused:", exc)
    """)], capture_output=True, text=True, timeout=60)
    assert "refused: the note was not written" in out.stdout, out.stderr
    assert memory.read_text() == "# Memory\n\n- old fact\n"
    assert os.path.getsize(memory) == size


def test_add_on_a_full_disk_leaves_no_new_file_and_says_so(tmp_path: Path,
                                                           workspace: Path) -> None:
    memory = workspace / "memory"
    why = mount_tmpfs(memory, "1m")  # a full disk, for real
    if why:
        pytest.skip(why)
    try:
        fill_filesystem(memory / "filler")
        before = sorted(p.name for p in memory.iterdir())
        config = tmp_path / "config.toml"
        config.write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMEMD_")}
        env["OPENMEMD_ENDPOINT"] = f"ipc://{tmp_path}/none.sock"  # no daemon: in process
        done = subprocess.run([sys.executable, "-m", "openmemd", "add", "the heron note",
                               "--config", str(config), "--workspace", str(workspace),
                               "--state-dir", str(tmp_path / "state")],
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode != 0
        # No 0-byte daily note; only the MEMORY.md lock every add takes (memory/.dreams/).
        assert sorted(p.name for p in memory.iterdir() if p.name != ".dreams") == before
        assert done.stdout == ""
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
        assert "the note was not written: No space left on device" in done.stderr, done.stderr
    finally:
        subprocess.run(["umount", "-l", str(memory)], capture_output=True)


def test_cited_lines_are_where_notes_landed_with_lock_free_writers_appending(
        workspace: Path) -> None:
    """An editor, OpenClaw or a shell appends to the same daily note without our lock: every
    reply still cites the lines its note is on."""
    path = workspace / "memory" / "2026-03-04.md"
    stop = workspace / "stop"
    raw = textwrap.dedent(f"""
        import os, sys
        n = 0
        while not os.path.exists({str(stop)!r}):
            with open({str(path)!r}, "a", encoding="utf-8") as f:
                f.write(f"raw {{sys.argv[1]}} line {{n}}\\n")
            n += 1
    """)
    notes = textwrap.dedent(f"""
        import sys
        from datetime import datetime, timezone
        from openmemd.notes import append_note
        now = datetime(2026, 3, 4, 12, 0, tzinfo=timezone.utc)
        for i in range(40):
            note = append_note({str(workspace)!r}, f"proc {{sys.argv[1]}} note {{i}}", now=now)
            cited = f"- proc {{sys.argv[1]}} note {{i}}"
            print(f"CITED\t{{cited}}\t{{note.start_line}}\t{{note.end_line}}")
    """)
    append_note(workspace, "first", now=NOW)
    rawers = [subprocess.Popen([sys.executable, "-c", raw, str(n)]) for n in range(2)]
    procs = [subprocess.Popen([sys.executable, "-c", notes, str(n)], stdout=subprocess.PIPE,
                              text=True) for n in range(2)]
    cited: list[tuple[str, int, int]] = []
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(40):
                note = append_note(workspace, f"thread {n} note {i}\nsecond line", now=NOW)
                cited.append((f"- thread {n} note {i}", note.start_line, note.end_line))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    try:
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        for p in procs:
            out, _ = p.communicate(timeout=120)
            for line in out.splitlines():
                if line.startswith("CITED\t"):  # the rest is the log
                    _, text, start, end = line.split("\t")
                    cited.append((text, int(start), int(end)))
    finally:
        stop.touch()
        for p in rawers:
            p.wait(60)
    assert errors == [] and len(cited) == 3 * 40 + 2 * 40
    wrong = [(text, start, lines_of(path, start, end)) for text, start, end in cited
             if lines_of(path, start, end)[:1] != [text]
             or (text.startswith("- thread") and lines_of(path, start, end) != [text,
                                                                                "  second line"])]
    assert wrong == []
