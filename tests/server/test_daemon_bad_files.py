"""Through the real daemon: a reconcile over a workspace with odd files indexes every good file,
reports the bad one with its reason in `status`, logs it once, and later syncs keep working."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

from daemon_harness import DEBOUNCE_MS, Daemon, make_daemon
from helpers import wait_for

CONFIG = (f'sources = ["memory", "sessions"]\n[embedding]\nprovider = "none"\n'
          f'[sync]\nwatch_debounce_ms = {DEBOUNCE_MS}\n')


@pytest.fixture
def odd_daemon() -> Iterator[Daemon]:
    yield from make_daemon(CONFIG)


def test_reconcile_with_odd_files_indexes_all_the_rest(odd_daemon: Daemon) -> None:
    d = odd_daemon
    notes = d.workspace / "memory"
    for i in range(12):
        (notes / f"note-{i:02d}.md").write_text(f"Field note {i}: the gannet colony.\n")
    (notes / "laugh.md").write_text("ha " * 3000 + "\n")
    with open(os.fsencode(notes) + b"/bad-\xff\xfe-name.md", "wb") as fh:
        fh.write(b"a note under a name that is not UTF-8\n")
    (d.workspace / "sessions").mkdir()
    (d.workspace / "sessions" / "odd.jsonl").write_text("\n".join([
        '{"type": "message", "timestamp": 1e400, "message": {"role": "user", '
        '"content": "the gannet transcript"}}',
        '{"type": "message", "message": {"role": "assistant", "content": "lone \\ud800"}}',
    ]) + "\n")
    d.start()

    def indexed() -> set[str]:
        with d.client() as c:
            reply = c.search("gannet", min_score=0.0, max_results=50)
        return {r["path"] for r in reply["results"]}

    expected = {f"memory/note-{i:02d}.md" for i in range(12)} | {"sessions/odd.jsonl"}
    assert wait_for(lambda: indexed() >= expected, 30), (indexed(), d.stop_and_logs())
    with d.client() as c:
        c.sync(wait=True)  # a second reconcile over the same bad file
        status = c.status()
    agent = status["agents"]["main"] if "agents" in status else status
    skipped = agent["lastSync"]["report"]["skipped"]
    assert skipped == [{"path": "memory/bad-\\xff\\xfe-name.md",
                        "reason": "file name is not valid UTF-8; rename the file to index it"}]
    assert agent["indexer"]["lastError"] is None
    (notes / "later.md").write_text("The gannet chicks hatched.\n")
    assert wait_for(lambda: "memory/later.md" in indexed(), 30)
    assert d.stop() == 0
    logs = d.stderr()
    skipped_lines = [json.loads(line) for line in logs.splitlines()
                     if line.startswith("{") and '"file skipped"' in line]
    assert len(skipped_lines) == 1, logs[-3000:]
