"""Dependencies point one way (DESIGN.md), and the code stays ruff-clean."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "daemon" / "openmemd"

# What each layer may import from openmemd (besides itself). `index` shares the keyword
# tokenisation with `search` (the indexer writes what the keyword leg reads).
ALLOWED = {
    "config": {"paths"},
    "openclaw_config": set(),  # openclaw.json -> raw settings; imports nothing of ours
    "settings_layers": {"openclaw_config"},  # the layers merged, for config
    "config_cmd": {"config", "settings_layers"},  # `openmemd config show`
    "paths": set(),
    "errors": set(),
    "progress": set(),
    "log": {"config"},
    "store": {"config", "paths", "errors", "log"},
    "embed": {"config", "paths", "errors", "log", "store"},
    "search": {"config", "paths", "errors", "log", "store"},
    "index": {"config", "paths", "errors", "log", "store", "embed", "search.tokens"},
    "dreaming": {"config", "paths", "errors", "log"},
    "notes": {"config", "paths", "errors", "log", "dreaming", "search.snippets"},
    "api": {"config", "paths", "errors", "log", "store", "embed", "search", "index", "dreaming",
            "notes"},
    "client": {"config", "paths", "errors", "log", "server.protocol"},
    "server": {"config", "paths", "errors", "log", "api", "client", "dreaming", "store",
               "embed", "search", "index", "progress",
               # the daemon hosts MCP sessions: server.mcp_host imports mcp_server (the SDK)
               # in a background thread once ready
               "mcp_server"},
    "cli": {"config", "paths", "errors", "log", "api", "client", "server", "dreaming",
            "discovery", "cli_report", "progress", "mcp_cli"},
    "discovery": {"config", "paths", "errors", "client"},
    "cli_report": {"config", "paths", "errors", "log", "api", "client", "server", "discovery",
                   "progress"},
    # `openmemd add` / `openmemd mcp`: beside cli; only cli imports mcp_cli, only mcp_cli
    # imports mcp_server (the optional SDK).
    "mcp_cli": {"config", "paths", "errors", "log", "api", "client", "discovery", "mcp_server",
                "mcp_pipe"},
    # stdin/stdout <-> the daemon's MCP socket: no SDK, nothing heavy
    "mcp_pipe": {"config", "errors", "discovery"},
    "mcp_server": {"config", "paths", "errors", "log", "api", "client", "discovery", "server"},
}
ALLOWED["cli"].add("config_cmd")
# openclaw.json is a settings layer beside config: whoever may import config may import it.
for _rules in ALLOWED.values():
    if "config" in _rules:
        _rules.update(("openclaw_config", "settings_layers"))
ALLOWED["config"].update(("openclaw_config", "settings_layers"))


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    return rel.parts[0]


def openmemd_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: inside its own package
                continue
            names = [node.module or ""]
            names += [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            if name.startswith("openmemd."):
                found.add(name.removeprefix("openmemd."))
    return found


def allowed(target: str, rules: set[str], own: str) -> bool:
    if target == own or target.startswith(own + "."):
        return True
    head = target.split(".")[0]
    if head in rules:
        return True
    return any(target == r or target.startswith(r + ".") for r in rules)


def test_import_direction():
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py" or (path.parent == PACKAGE and path.name == "__init__.py"):
            continue
        layer = layer_of(path)
        rules = ALLOWED[layer]
        for target in openmemd_imports(path):
            head = target.split(".")[0]
            if head in ("__version__",) or target in ("__version__",):
                continue
            if not allowed(target, rules, layer):
                problems.append(f"{path.relative_to(ROOT)} imports openmemd.{target}")
    assert problems == []


def test_ruff_clean():
    # ruff is in the test extras, next to this interpreter; a missing ruff fails, not skips.
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is not installed: pip install -e '.[test]'"
    out = subprocess.run([ruff, "check", "--output-format", "concise", "daemon", "tests",
                          "bench"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
