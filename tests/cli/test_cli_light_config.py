"""A command a running daemon answers reads only the config keys that locate the index
(cli/fast.py): it may leave the rest of the file unchecked only when the daemon loaded and
checked that very file as it is now. Any other file, or the daemon's own edited since, is
checked whole, and a mistake in it is the usual one-line config error (exit 2)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from daemon_harness import Daemon, zebra_daemon


@pytest.fixture(scope="module")
def served() -> Iterator[Daemon]:
    yield from zebra_daemon()


def test_the_daemons_own_unchanged_config_is_trusted(served: Daemon) -> None:
    done = served.cli("search", "zebra")
    assert done.returncode == 0 and "Zora" in done.stdout, done.stderr


def test_another_config_file_is_checked_before_the_daemon_answers(served: Daemon) -> None:
    other = served.root / "other.toml"
    other.write_text(served.config.read_text() + "\n[query]\nmax_results = 0\n")
    argv = [a if a != str(served.config) else str(other) for a in served.args("status")]
    done = subprocess.run(argv, env=served.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("openmemd: config error:") and "max_results" in done.stderr


def test_the_daemons_config_edited_since_it_loaded_is_checked(served: Daemon) -> None:
    before = served.config.read_text()
    served.config.write_text(before + "\n[query]\nmax_results = 0\n")
    try:
        done = served.cli("search", "zebra")
        assert done.returncode == 2, done.stdout + done.stderr
        assert "config error" in done.stderr and "max_results" in done.stderr
        assert "Traceback" not in done.stderr
    finally:
        served.config.write_text(before)
    done = served.cli("search", "zebra")  # fixed again: only its signature differs now
    assert done.returncode == 0 and "Zora" in done.stdout, done.stderr
