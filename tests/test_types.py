"""Types hold at every seam: `mypy --strict` (configured in pyproject.toml) is clean on the
package, and on the test files whose fakes stand in for a seam, so a fake that lacks a member
the server uses fails here instead of bending production code to fit it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Test modules with a stand-in checked against the Protocol it stands in for
# (`_: ServedIndex = FakeIndex()`, `_: Handler = Stub()`).
SEAM_FAKES = [
    "tests/server/test_server_indexer.py",  # FakeIndex: a complete ServedIndex
    "tests/server/test_server_zmq.py",  # Stub: a request Handler of the ZeroMQ server
    "tests/server/test_server_robust.py",  # Stub: the same
]


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    # mypy is in the test extras, next to this interpreter: a missing mypy fails, not skips.
    env = {**os.environ, "MYPYPATH": str(ROOT / "tests")}  # the tests import `helpers`
    return subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)


def test_package_is_strict_clean() -> None:
    out = mypy()  # files and strictness from [tool.mypy]
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == "", out.stdout


def test_no_package_is_excused() -> None:
    # "Strict-clean" means every module of ours: an override that ignores errors in one of
    # them would let the check above pass while it checks nothing there.
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+ (the package still runs on 3.10)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for override in config["tool"]["mypy"].get("overrides", []):
        modules = override["module"]
        modules = [modules] if isinstance(modules, str) else modules
        ours = [m for m in modules if m == "openmemd" or m.startswith("openmemd.")]
        assert not (ours and override.get("ignore_errors")), override


def test_seam_fakes_are_complete() -> None:
    out = mypy("--strict", *SEAM_FAKES)
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_missing_member_is_caught(tmp_path: Path) -> None:
    # The check can fail: a fake without `fill_vectors` is not a ServedIndex.
    source = (ROOT / SEAM_FAKES[0]).read_text(encoding="utf-8")
    start = source.index("    def fill_vectors(")
    end = source.index("    def warm(")
    broken = tmp_path / "test_broken_fake.py"
    broken.write_text(source[:start] + source[end:], encoding="utf-8")
    out = mypy("--strict", str(broken))
    assert out.returncode == 1
    assert '"FakeIndex" is missing following "ServedIndex" protocol member' in out.stdout
    assert "fill_vectors" in out.stdout
