"""A broken index, each way it breaks: doctor says ✗ with the fix (read-only, nothing renamed);
search, status and index say one line, exit non-zero, no traceback and no hang (the real CLI in
a subprocess with a timeout); garbage is still damage, moved aside and rebuilt by a search.

An unreadable index needs a process that permissions stop: as root (CI), the commands run
under `setpriv` without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so a chmod 000 file is
refused to root too; without setpriv those cases are skipped (tests/store/test_index_file.py
still checks the error -> message mapping)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from openmemd.cli import main

TIMEOUT_S = 30  # far above a command's second: reaching it is the hang
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


@functools.cache
def unprivileged() -> list[str] | None:
    """The prefix that makes a command subject to file permissions ([] when not root); None
    when root cannot drop them here."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        return None
    done = subprocess.run([*NO_DAC, "true"], capture_output=True, timeout=TIMEOUT_S)
    return NO_DAC if done.returncode == 0 else None


class Setup:
    def __init__(self, tmp_path: Path, workspace: Path) -> None:
        self.tmp = tmp_path
        self.state = tmp_path / "state"
        self.index = self.state / "memory" / "main.sqlite"
        self.config = tmp_path / "config.toml"
        self.config.write_text(f'workspace = "{workspace}"\nstate_dir = "{self.state}"\n'
                               '[embedding]\nprovider = "none"\n', encoding="utf-8")
        (workspace / "MEMORY.md").write_text("# Memory\n\nThe kestrel nests on the roof.\n")
        self.prefix: list[str] = []

    def args(self) -> list[str]:
        return ["--config", str(self.config), "--endpoint", f"ipc://{self.tmp}/none.sock"]

    def run(self, *command: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMEMD_")}
        env["PYTHONIOENCODING"] = "utf-8"
        try:
            return subprocess.run([*self.prefix, sys.executable, "-m", "openmemd", *command,
                                   *self.args()], env=env, capture_output=True, text=True,
                                  timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"openmemd {command[0]} still running after {TIMEOUT_S} s (a hang)")

    def build(self) -> None:
        assert main(["index", *self.args()]) == 0

    def listing(self) -> list[str]:
        return sorted(os.listdir(self.index.parent)) if self.state.is_dir() else []


def _garbage(s: Setup) -> None:
    s.index.write_bytes(b"\x8fnot an index\x00" * 600)


def _zero_bytes(s: Setup) -> None:
    s.index.write_bytes(b"")


def _unreadable(s: Setup) -> None:
    prefix = unprivileged()
    if prefix is None:
        pytest.skip("root, and no setpriv to drop CAP_DAC_OVERRIDE: root reads any file")
    s.index.chmod(0)
    s.prefix = prefix


def _read_only(s: Setup) -> None:
    _unreadable(s)
    s.index.chmod(0o400)


def _state_dir_a_file(s: Setup) -> None:
    shutil.rmtree(s.state)
    s.state.write_text("not a folder\n")


def _fifo(s: Setup) -> None:
    s.index.unlink()
    os.mkfifo(s.index, 0o600)


BREAK = {"garbage": _garbage, "zero bytes": _zero_bytes, "unreadable": _unreadable,
         "read-only": _read_only, "state dir a file": _state_dir_a_file, "fifo": _fifo}


@pytest.fixture
def broken(request, tmp_path, workspace, capsys) -> Setup:
    s = Setup(tmp_path, workspace)
    s.build()
    capsys.readouterr()
    BREAK[request.param](s)
    return s


def _index_line(out: str) -> str:
    found = [ln for ln in out.splitlines()
             if ln.startswith("✗ ") and ln[2:].startswith(("index:", "state dir:"))]
    assert len(found) == 1, out
    return found[0]


DOCTOR_SAYS = {
    "garbage": "✗ index: {index} is damaged: not a SQLite database (its first bytes are not "
               "SQLite's header) — fix: openmemd index moves it aside (.corrupt-...) and "
               "rebuilds it from the Markdown",
    "zero bytes": "✗ index: {index} is damaged: 0 bytes (truncated: even an empty index holds "
                  "its tables; its embeddings are lost) — fix: openmemd index rebuilds it",
    "unreadable": "✗ index: the index {index} cannot be read: permission denied (a permission "
                  "problem, not damage: the file is kept) — fix: chown $USER {index} && "
                  "chmod 600 {index}",
    "read-only": "✗ index: the index {index} cannot be written: permission denied (a "
                 "permission problem, not damage: the file is kept) — fix: chown $USER {index} "
                 "&& chmod 600 {index}",
    "state dir a file": "✗ state dir: {state} is not a directory: the index cannot be kept "
                        "there — fix: move it aside (mv {state} {state}.bak), or set state_dir "
                        "to a directory",
    "fifo": "✗ index: {index} is a FIFO (named pipe), not an index file (refused, never "
            "opened) — fix: move it away (mv {index} {index}.bak)",
}


# In a subprocess where a regression would hang (a FIFO) or permissions must apply to root;
# the others in process (a subprocess costs a second of the fast run).
IN_SUBPROCESS = ("unreadable", "read-only", "fifo")


@pytest.mark.parametrize("broken", list(BREAK), indirect=True)
def test_doctor_says_what_is_wrong_with_the_fix_and_changes_nothing(broken, request, capsys):
    case = request.node.callspec.params["broken"]
    before = broken.listing()
    if case in IN_SUBPROCESS:
        done = broken.run("doctor")
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        code = main(["doctor", *broken.args()])
        out, err = capsys.readouterr()
    assert code == 2, out + err
    assert _index_line(out).startswith(
        DOCTOR_SAYS[case].format(index=broken.index, state=broken.state)), out
    assert "Traceback" not in err and broken.listing() == before


COMMAND_SAYS = {
    "unreadable": "the index {index} cannot be {verb}: permission denied (a permission "
                  "problem, not damage: the file is kept); fix: chown $USER {index} && "
                  "chmod 600 {index}",
    "state dir a file": "{state} is a regular file, not a directory: the index {index} cannot "
                        "be kept under it; fix: move {state} aside",
    "fifo": "{index} is a FIFO (named pipe), not an index file (refused, never opened); fix: "
            "move it away",
}


@pytest.mark.slow  # three commands in subprocesses: about 3 s
@pytest.mark.parametrize("broken", list(COMMAND_SAYS), indirect=True)
def test_search_status_and_index_say_one_line_and_keep_the_file(broken, request):
    case = request.node.callspec.params["broken"]
    before = broken.listing()
    for command, verb in (("search", "written"), ("index", "written"), ("status", "read")):
        done = broken.run(command, *(["kestrel"] if command == "search" else []))
        says = COMMAND_SAYS[case].format(index=broken.index, state=broken.state, verb=verb)
        assert done.returncode != 0, (command, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, (command, done.stderr)
        if command == "status":  # the page, with the agent's error on one of its lines
            assert any(says in ln for ln in done.stdout.splitlines()), done.stdout
        else:
            assert done.stderr.startswith(f"openmemd: {says}"), (command, done.stderr)
            assert done.stderr.count("\n") == 1, (command, done.stderr)
    # kept, not renamed .corrupt- nor rebuilt (its embeddings with it)
    assert broken.listing() == before


@pytest.mark.parametrize("broken", ["read-only"], indirect=True)
def test_a_search_on_an_index_it_cannot_write_says_so_in_one_line(broken):
    done = broken.run("search", "kestrel")  # without a daemon a search catches the index up
    assert done.returncode == 1 and done.stderr == (
        f"openmemd: the index {broken.index} cannot be written: permission denied (a permission "
        f"problem, not damage: the file is kept); fix: chown $USER {broken.index} && chmod 600 "
        f"{broken.index} (and chmod 700 {broken.index.parent})\n")


@pytest.mark.slow  # a search rebuilding in a subprocess: about 2 s
@pytest.mark.parametrize("broken", ["garbage", "zero bytes"], indirect=True)
def test_a_search_still_rebuilds_a_damaged_index(broken, request):
    done = broken.run("search", "kestrel")
    assert done.returncode == 0 and "kestrel nests on the roof" in done.stdout, done.stderr
    assert "Traceback" not in done.stderr
    moved = [n for n in broken.listing() if ".corrupt-" in n]
    if request.node.callspec.params["broken"] == "garbage":  # damage: moved aside, rebuilt
        assert len(moved) == 1 and "index damaged rebuilding" in done.stderr, done.stderr
    else:  # SQLite reads 0 bytes as a new, empty database: filled in place
        assert moved == []
