"""Claude Code and Codex sessions found by `openmemd search`, read back by `get` (in process,
keyword-only, fake homes from fake_homes.py)."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest
from fake_homes import OTHER_PROJECT, PROJECT, SECRET, make_homes


def last_friday(today: date) -> date:
    back = (today.weekday() - 4) % 7 or 7
    return today - timedelta(days=back)


@pytest.fixture
def homes(tmp_path: Path, make_settings, monkeypatch: pytest.MonkeyPatch):
    today = date.today()
    friday = datetime.combine(last_friday(today), time(12, 0)).astimezone()
    earlier = friday - timedelta(days=20)
    files = make_homes(tmp_path, friday, earlier)
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(files["home"]))
    make_settings('sources = ["memory", "sessions", "claude-code", "codex"]\n')
    return files


def search(cli, *args: str) -> list[dict[str, object]]:
    code, out = cli("search", *args, "--json", "--min-score", "0")
    assert code == 0, out
    return list(json.loads(out)["results"])


def test_claude_code_fact_found_cited_and_read_masked(homes, cli) -> None:
    code, out = cli("index", "--json")
    assert code == 0 and json.loads(out)["indexed"] == 3  # two Claude Code files, one Codex
    (hit,) = [h for h in search(cli, "quokka backoff") if "quokka backoff" in str(h["snippet"])]
    assert hit["source"] == "claude-code" and str(hit["path"]).startswith("claude-code/")
    # one chunk, cited by its first and last message's JSONL lines
    assert hit["path"].endswith(".jsonl") and (hit["startLine"], hit["endLine"]) == (1, 6)
    code, out = cli("get", str(hit["citation"]), "--json")
    got = json.loads(out)
    assert code == 0 and "quokka backoff schedule" in got["text"]
    code, out = cli("get", str(hit["path"]), "--json")
    text = json.loads(out)["text"]
    assert SECRET not in text and "sk-liv…3456" in text and "zanzibar" not in text
    secret_hits = search(cli, "stripe key staging")
    assert secret_hits and all(SECRET not in str(h["snippet"]) for h in secret_hits)
    (sub,) = search(cli, "narwhal rounding")
    assert "/subagents/" in str(sub["path"]) and "Subagent assistant:" in str(sub["snippet"])


def test_codex_fact_found_once_and_read(homes, cli) -> None:
    hits = search(cli, "pelican layout")
    assert {h["source"] for h in hits} == {"codex"}
    lines = {(h["startLine"], h["endLine"]) for h in hits}
    assert lines == {(3, 10)}  # one chunk; the event_msg copies are not indexed
    code, out = cli("get", str(hits[0]["path"]), "--json")
    got = json.loads(out)
    # the message and the compaction summary
    assert code == 0 and got["text"].count("pelican layout.") == 2
    assert got["lineNumbers"] == [3, 6, 8, 10] and "wombat" not in got["text"]


def test_date_question_finds_the_session_of_that_day(homes, cli) -> None:
    # another session, a month older, says more about billing decisions
    older = datetime.combine(date.today() - timedelta(days=33), time(12, 0)).astimezone()
    record = {"type": "user", "sessionId": "old", "cwd": PROJECT, "timestamp": older.isoformat(),
              "message": {"role": "user", "content": "We decide billing: billing decided, "
                                                     "billing invoices monthly, decide billing."}}
    (homes["claude"].parent / "old.jsonl").write_text(json.dumps(record) + "\n")
    assert search(cli, "what did we decide about billing")[0]["path"].endswith("old.jsonl")
    hits = search(cli, "what did we decide about billing last Friday",
                  "--today", date.today().isoformat())
    assert hits and hits[0]["path"] == f"claude-code/{homes['claude'].parent.name}/" \
        f"{homes['claude'].name}"
    assert "quokka" in str(hits[0]["snippet"])


def test_project_narrows_the_search(homes, cli) -> None:
    assert {h["source"] for h in search(cli, "marigolds OR quokka")} >= {"codex", "claude-code"}
    only = search(cli, "marigolds OR quokka", "--project", PROJECT)
    assert only and {h["source"] for h in only} == {"claude-code"}
    garden = search(cli, "marigolds OR quokka", "--project", OTHER_PROJECT + "/")
    assert garden and {h["source"] for h in garden} == {"codex"}


def test_project_travels_on_the_wire_and_through_mcp_arguments() -> None:
    from openmemd.protocol.requests import SearchRequest, parse_fields, to_wire

    request = SearchRequest("billing", project=PROJECT)
    assert to_wire(request)["project"] == PROJECT
    assert parse_fields(to_wire(request)) == request
