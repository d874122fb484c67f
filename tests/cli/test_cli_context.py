"""`openmemd context` in process (no daemon), the local handler and the library call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hostile_notes import BINARY_WHY, CONTROL, controls_in, hostile_workspace
from openmemd.api.handler import LocalHandler
from openmemd.api.memory_index import MemoryIndex
from openmemd.cli import main
from openmemd.protocol.requests import ContextRequest

TODAY, YESTERDAY = "2026-12-01", "2026-11-30"


@pytest.fixture
def cli(make_settings, workspace: Path, tmp_path: Path, capsys):
    make_settings("[context]\ndaily_total_max_chars = 40\n")
    endpoint = f"ipc://{tmp_path}/none.sock"  # nothing listens here

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["context", *args, "--config", str(tmp_path / "config.toml"),
                     "--endpoint", endpoint])
        out = capsys.readouterr()
        return code, out.out, out.err

    (workspace / "USER.md").write_text("Name: Ann. Timezone: Europe/Paris.\n")
    (workspace / "MEMORY.md").write_text("# Memory\n\n- Allergic to peanuts.\n")
    (workspace / "memory" / f"{TODAY}.md").write_text("Call the plumber.\nPay the rent.\n")
    (workspace / "memory" / f"{YESTERDAY}.md").write_text(
        "Long day: " + "meetings, " * 10 + "\n")
    return run


def test_text_output_is_the_block(cli) -> None:
    code, out, err = cli("--today", TODAY)
    assert code == 0 and err == ""
    assert out.startswith("[Startup context: the user's memory files")
    assert out.index("Name: Ann") < out.index("Allergic to peanuts") < out.index("plumber")
    # 31 characters of today's note leave 9 of 40: "Long day:", cut inside its one line
    assert f"Long day:\n[… truncated: 100 more characters in memory/{YESTERDAY}.md]" in out


def test_json_output_lists_files_budgets_truncations_and_days(cli) -> None:
    code, out, _ = cli("--today", TODAY, "--json")
    reply = json.loads(out)
    assert code == 0 and reply["days"] == [TODAY, YESTERDAY] and reply["truncated"] is True
    assert [(f["path"], f["kind"]) for f in reply["files"]] == [
        ("USER.md", "bootstrap"), ("MEMORY.md", "bootstrap"),
        (f"memory/{TODAY}.md", "daily"), (f"memory/{YESTERDAY}.md", "daily")]
    plumber = reply["files"][2]
    assert plumber == {"path": f"memory/{TODAY}.md", "kind": "daily", "day": TODAY,
                       "bytes": 32, "includedChars": 31, "includedBytes": 31,
                       "truncated": None}
    assert reply["files"][3]["truncated"] == {"omittedChars": 100, "omittedBytes": 0,
                                              "by": ["dailyTotalMaxChars"]}
    assert reply["budgets"]["dailyTotalMaxChars"] == 40
    assert reply["used"] == {"bootstrapChars": 34 + 32, "dailyChars": 40}
    assert reply["text"].endswith("</untrusted-memory-files>\n")


def test_nothing_to_load_and_bad_input_are_one_line(cli, workspace: Path) -> None:
    for name in ("USER.md", "MEMORY.md", f"memory/{TODAY}.md", f"memory/{YESTERDAY}.md"):
        (workspace / name).unlink()
    code, out, err = cli("--today", TODAY)
    assert code == 0 and out == ""
    assert err == (f"openmemd: no memory files to load: no USER.md or MEMORY.md, no notes of "
                   f"{TODAY} or {YESTERDAY} in {workspace}\n")
    code, out, err = cli("--today", "12/01/2026")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--today must be a date as YYYY-MM-DD" in err


def test_local_handler_and_library_give_the_daemons_reply(make_settings,
                                                          workspace: Path) -> None:
    settings = make_settings()
    (workspace / "MEMORY.md").write_text("- Owns a red bicycle.\n")
    handler = LocalHandler(settings)
    reply = handler(ContextRequest(today=TODAY)).to_json()
    assert reply["agent"] == "main" and "red bicycle" in reply["text"]
    with MemoryIndex.open(workspace, config=settings) as index:
        library = index.context(today=TODAY)
    assert library == {k: v for k, v in reply.items() if k != "agent"}


def test_a_hostile_workspace_reaches_no_prompt_with_a_control_byte(
        make_settings, workspace: Path, tmp_path: Path, capsys) -> None:
    """The command (text and --json, on stdout and stderr) and the local handler's reply."""
    settings = make_settings()
    hostile_workspace(workspace)
    reply = LocalHandler(settings)(ContextRequest(today=TODAY)).to_json()
    assert controls_in(reply) == [] and "Dentist at 3pm." in reply["text"]
    assert reply["skipped"] == [{"path": f"memory/{YESTERDAY}.md", "reason": BINARY_WHY}]
    for extra in ((), ("--json",)):
        code = main(["context", "--today", TODAY, *extra, "--config",
                     str(tmp_path / "config.toml"), "--endpoint", f"ipc://{tmp_path}/none.sock"])
        out = capsys.readouterr()
        assert code == 0 and not CONTROL.search(out.out) and not CONTROL.search(out.err)
        shown = json.loads(out.out)["text"] if extra else out.out
        assert shown == reply["text"] and f"[… skipped: memory/{YESTERDAY}.md" in shown
        assert out.err == f"openmemd: skipped memory/{YESTERDAY}.md: {BINARY_WHY}\n"


def test_max_chars_fits_the_block_and_is_checked(cli) -> None:
    code, out, err = cli("--today", TODAY, "--max-chars", "1000")
    assert code == 0 and err == "" and len(out) <= 1000
    assert "plumber" in out  # today's note kept first
    code, out, err = cli("--today", TODAY, "--max-chars", "999")
    assert (code, out) == (2, "")
    assert err.strip() == "openmemd: --max-chars must be between 1000 and 10000000 (got 999)"


def test_max_chars_travels_as_maxchars(workspace: Path) -> None:
    from openmemd.protocol.requests import ProtocolError, parse_fields, to_wire

    assert to_wire(ContextRequest(max_chars=2000))["maxChars"] == 2000
    assert parse_fields({"op": "context", "maxChars": 2000}) == ContextRequest(max_chars=2000)
    with pytest.raises(ProtocolError, match="'maxChars' must be between 1000"):
        parse_fields({"op": "context", "maxChars": 10})
