"""The real daemon (a subprocess) beside a fake OpenClaw install: zero openmemd config beyond
the keyword-only provider, everything else read from openclaw.json."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from helpers import wait_for
from openclaw_fixture import make_openclaw, message
from openmemd.client import Client, DaemonNotRunning


def test_daemon_serves_openclaw_agents_transcripts_and_leaves_dreaming(tmp_path: Path) -> None:
    oc = make_openclaw(tmp_path)
    (oc.sessions / "s1.jsonl").write_text(message("user", "the lighthouse keeper") + "\n",
                                          encoding="utf-8")
    (oc.workspace / "MEMORY.md").write_text("# Memory\n\nThe lighthouse is red.\n")
    sock_dir = Path(tempfile.mkdtemp(dir="/tmp", prefix="omoc"))
    endpoint = f"ipc://{sock_dir}/d.sock"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENMEMD_", "NOTIFY_", "WATCHDOG_"))}
    env.update(oc.env, OPENMEMD_ENDPOINT=endpoint)
    proc = subprocess.Popen([sys.executable, "-m", "openmemd", "run", "--config",
                             str(oc.config)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)

    def ready() -> bool:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            with Client(endpoint, timeout=0.5) as c:
                c.ping()
            return True
        except DaemonNotRunning:
            return False

    try:
        assert wait_for(ready, 60)
        with Client(endpoint, timeout=30) as c:
            assert wait_for(lambda: any(
                r["path"] == "sessions/s1.jsonl"
                for r in c.search("lighthouse keeper", min_score=0.0)["results"]), 30)
            reply = c.search("lighthouse", min_score=0.0, max_results=10)
            assert reply["citations"] == "off"
            assert all("citation" not in r for r in reply["results"])
            assert len(reply["results"]) == 2  # openclaw.json's maxResults
            status = c.status()
        assert set(status["agents"]) == {"main", "work"}
        assert status["scheduler"]["jobs"]["dreaming"] is None
        notes = status["notes"]
        assert "main: dreaming: left to OpenClaw" in notes
        assert any(n.startswith("ignored from openclaw.json: ") for n in notes)
        assert status["agents"]["main"]["sessionsDir"] == str(oc.sessions)
        assert status["agents"]["main"]["dreaming"]["leftToOpenClaw"] is True
        # The API key from openclaw.json is never shown.
        assert "sk-ollama-secret" not in str(status)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate(timeout=10)
        shutil.rmtree(sock_dir, ignore_errors=True)
    assert proc.returncode == 0, err[-3000:]
    assert "sk-ollama-secret" not in err


def test_reload_rereads_openclaw_dreaming_switch(tmp_path: Path) -> None:
    import threading

    from openmemd.config import load_settings
    from openmemd.server.daemon import Daemon

    oc = make_openclaw(tmp_path)
    sock_dir = Path(tempfile.mkdtemp(dir="/tmp", prefix="omoc"))
    env = {**oc.env, "OPENMEMD_ENDPOINT": f"ipc://{sock_dir}/d.sock"}

    def reload():
        return load_settings(oc.config, env=env)

    d = Daemon(reload(), reload=reload, env={})
    t = threading.Thread(target=d.run, daemon=True)
    t.start()
    try:
        assert d.ready.wait(60)
        assert d.scheduler is not None and d.scheduler.next_runs()["dreaming"] is None
        # `/dreaming off` in OpenClaw rewrites openclaw.json; a SIGHUP makes openmemd dream.
        oc.write_json(OPENCLAW_NO_DREAMING)
        d.request_reload()
        assert wait_for(lambda: d.scheduler.next_runs()["dreaming"] is not None, 30)
        assert d.agents["main"].index.settings.citations == "on"
    finally:
        d.request_stop()
        t.join(30)
        shutil.rmtree(sock_dir, ignore_errors=True)


OPENCLAW_NO_DREAMING = """{
  agents: { list: [{ id: "main" }, { id: "work" }] },
  memory: { citations: "on" },
  plugins: { entries: { "memory-core": { config: { dreaming: { enabled: false } } } } },
}"""


def test_sighup_says_which_agent_settings_wait_for_a_restart(tmp_path: Path) -> None:
    """An agent's embedding provider changed in openclaw.json shapes its open index: SIGHUP
    cannot apply it, so the log line and `status` name it (per agent) until a restart."""
    from contextlib import contextmanager

    from daemon_harness import make_daemon

    oc = make_openclaw(tmp_path)
    # No provider in config.toml: openclaw.json's own apply (a remote one nobody listens on).
    remote = '{ provider: "openai", remote: { baseUrl: "http://127.0.0.1:9/v1" } }'
    json5 = ('{ agents: { defaults: { memorySearch: %s }, list: [ { id: "main" }, '
             '{ id: "work", memorySearch: %s } ] } }')
    oc.write_json(json5 % (remote, remote))
    with contextmanager(make_daemon)('[sync]\nwatch_debounce_ms = 100\n') as d:
        d.env.update(oc.env)
        d.start()
        with d.client() as c:
            assert "restartNeeded" not in c.status()["agents"]["work"]
        oc.write_json(json5 % (remote, '{ provider: "local" }'))
        assert d.proc is not None
        d.proc.send_signal(signal.SIGHUP)
        assert wait_for(lambda: "configuration reloaded" in d.stderr() + d.stdout(), 30)
        with d.client() as c:
            status = c.status()
        assert "embedding.provider" in status["agents"]["work"]["restartNeeded"]
        assert "restartNeeded" not in status["agents"]["main"]
        assert any(n.startswith("changed, applied at the next restart: work: embedding.provider")
                   for n in status["notes"]), status["notes"]
        assert "work: embedding.provider" in d.stderr() + d.stdout()
        assert d.stop() == 0
