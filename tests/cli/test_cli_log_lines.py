"""A command's stderr is for the user: what went wrong in one line each, never a JSON log
event (those are for the daemon's journal)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path


def _dead_port() -> int:
    with socket.socket() as s:  # bound, then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_a_provider_outage_is_one_human_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-05-03.md").write_text("- met Alice at the harbour\n")
    config = tmp_path / "config.toml"
    config.write_text(f'workspace = "{ws}"\nstate_dir = "{tmp_path / "state"}"\n[embedding]\n'
                      f'provider = "openai"\nbase_url = "http://127.0.0.1:{_dead_port()}/v1"\n'
                      'model = "m"\napi_key = "k"\nmax_retries = 0\n', encoding="utf-8")
    common = ["--config", str(config), "--endpoint", f"ipc://{tmp_path}/none.sock"]
    for command in (["index"], ["search", "harbour"]):
        done = subprocess.run([sys.executable, "-m", "openmemd", *command, *common],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        lines = done.stderr.splitlines()
        for line in lines:
            try:
                json.loads(line)
            except ValueError:
                continue
            raise AssertionError(f"a JSON log line on stderr: {line}")
        said = [line for line in lines if "embedding provider unavailable" in line]
        assert len(said) == 1, done.stderr
