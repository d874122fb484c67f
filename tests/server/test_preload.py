"""The daemon imports, before it answers, every module it would otherwise import lazily
(server/preload.py): a module imported inside a function anywhere a daemon can reach is either
preloaded or left lazy with its reason, so a new lazy import cannot bring back the first
requests' `internal` replies (issue 25)."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from openmemd.server.preload import LEFT_LAZY, MODULES

PACKAGE = Path(__file__).resolve().parents[2] / "daemon" / "openmemd"
# Never run by a daemon: the command line.
NOT_IN_DAEMON = ("cli",)


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_openmemd_module(name: str) -> bool:
    rel = Path(*name.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


def lazy_imports() -> dict[str, str]:
    """Every module imported inside a function in the daemon's reach -> where (file:line)."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in NOT_IN_DAEMON or rel.name == "__main__.py":
            continue
        own = _module_of(path)
        package = own if path.name == "__init__.py" else own.rsplit(".", 1)[0]
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:
                        up = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                        base = ".".join([*up, *([base] if base else [])])
                    # `from openmemd.server import mcp_session`: the name is the module
                    names = [f"{base}.{a.name}" for a in node.names
                             if base.split(".")[0] == "openmemd"
                             and _is_openmemd_module(f"{base}.{a.name}")] or [base]
                for name in names:
                    found.setdefault(name, f"{rel}:{node.lineno}")
    return found


def modules_after_preload() -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", "import json, sys\n"
         "from openmemd.server.preload import preload\n"
         "preload()\n"
         "print(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(out.stdout))


def test_every_lazy_import_is_preloaded_or_left_with_a_reason() -> None:
    lazy = lazy_imports()
    listed = set(MODULES) | set(LEFT_LAZY)
    unlisted = {name: where for name, where in lazy.items() if name not in listed}
    assert unlisted == {}, "add these to server/preload.py MODULES (or LEFT_LAZY, with why)"
    assert listed - set(lazy) == set(), "listed in server/preload.py, lazily imported nowhere"


def test_a_fresh_interpreter_has_them_all_after_preload() -> None:
    loaded = modules_after_preload()
    absent = [name for name in MODULES if name not in loaded
              and importlib.util.find_spec(name.split(".")[0]) is not None]
    assert absent == []
    # and the ones left lazy really are, so what LEFT_LAZY says stays true
    assert [name for name in LEFT_LAZY if name in loaded] == []


# What the daemon does before it serves MCP sessions (mcp_host.py), then one session as a host
# opens it; writes the modules that session imported to the file named by its argument.
HOSTED_SESSION = """
import json, socket, sys, tempfile, time
from pathlib import Path
from openmemd.api.handler import LocalHandler
from openmemd.config import Settings
from openmemd.server.mcp_host import McpHost
from openmemd.server.preload import preload

preload()
host = McpHost(Path(tempfile.mkdtemp()) / "mcp.sock", LocalHandler(Settings()), {"main": 1})
host.start()
while host.advertised() is None:
    time.sleep(0.05)
before = set(sys.modules)
with socket.socket(socket.AF_UNIX) as conn:
    conn.connect(str(host.path))
    lines = conn.makefile("rwb")
    for message in ({"openmemdAgent": "main"},
                    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "0"}}},
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}):
        lines.write(json.dumps(message).encode() + b"\\n")
        lines.flush()
        if "method" not in message or "id" in message:
            assert b"error" not in lines.readline()
host.stop()
Path(sys.argv[1]).write_text(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_a_hosted_mcp_session_imports_nothing_new(tmp_path: Path) -> None:
    # Sessions start on their own threads, several at once: what a first session would
    # import (anyio's event loop backend, its socket streams) is imported before serving.
    result = tmp_path / "imported.json"
    out = subprocess.run([sys.executable, "-c", HOSTED_SESSION, str(result)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(result.read_text()) == []
