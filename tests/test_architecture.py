"""The house matches its plan (DESIGN.md): dependencies point one way, no import circle, and
the code stays ruff-clean, its functions small (C901, PLR0915: the limit is on functions, not
on a module's length)."""

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "daemon" / "openmemd"

# DESIGN.md: `cli` / `server` -> `mcp` -> `api` -> `search`, `index`, `dreaming` -> `embed`,
# `store` -> `protocol`, `config`, `paths`. A layer may import the layers below it, never beside
# or above. FOUNDATION is what every layer may use: settings, locations, errors, logging,
# progress reporting, lock files.
FOUNDATION = {"config", "paths", "errors", "log", "progress", "locks"}
ALLOWED = {
    # the foundation itself, bottom up
    "paths": set(),
    "errors": set(),
    "progress": set(),
    "locks": set(),
    "config": {"paths", "errors"},
    "log": {"config", "paths", "errors"},
    # the request protocol, used by both ends (client, daemon, local handler)
    "protocol": {"config", "paths", "errors"},
    # shared text handling (keyword tokens, CJK), storage and embeddings
    "text": set(),
    "store": FOUNDATION | {"text"},
    "embed": FOUNDATION,
    # other agents on this machine: their session files read into message lines (pure parsing,
    # below index, which masks, chunks and stores what they give) and their settings files
    # (connect/disconnect, which write openmemd's config: config, paths); the hook's side of
    # the wire is pure (claude_code_hook), the command that runs it is cli's
    "agents": FOUNDATION,
    # the three below api
    "search": FOUNDATION | {"embed", "store", "text"},
    "index": FOUNDATION | {"embed", "store", "text", "agents"},
    "dreaming": FOUNDATION | {"embed", "store", "text"},
    "notes": FOUNDATION | {"dreaming", "search", "protocol"},  # `MemoryIndex.add`: an agent's note
    # the session's startup context: read with the index's symlink-safe open and skip rule,
    # days in dreaming's timezone, no control characters (index, dreaming.clock, text.controls)
    "context": FOUNDATION | {"index", "dreaming", "text"},
    # the client sends protocol requests to a daemon; discovery pings the candidates for
    # api/route.py, the one place that decides local or daemon (nothing else imports it)
    "client": FOUNDATION | {"protocol"},
    "discovery": FOUNDATION | {"client", "protocol"},
    # api: the facade and the local request handler (agents: the connection records that
    # status, doctor and config show list)
    "api": FOUNDATION | {"search", "index", "dreaming", "embed", "store", "notes", "context",
                         "agents", "protocol", "client", "discovery"},
    # MCP: tools over the same requests, local or through the daemon
    "mcp": FOUNDATION | {"api", "client", "protocol"},
    # the loopback web dashboard: its pages ask the daemon's Handler with protocol requests
    # (api: none yet, the Memory/Dreams views may need its records)
    "dashboard": FOUNDATION | {"api", "protocol"},
    # the top: the daemon and the command line
    "server": FOUNDATION | {"api", "client", "protocol", "mcp", "dashboard"},
    "cli": FOUNDATION | {"api", "client", "protocol", "mcp", "agents", "dashboard"},
}

# Every import the direction above does not allow, each with its reason. Each entry is
# (importing module or package, imported module); an entry nothing uses any more fails the
# test, so this list only shrinks.
EXCEPTIONS = {
    ("cli", "server"): "`openmemd run` and `openmemd service` start and install the daemon",
    ("server.session_watch", "index.safeopen"): "the session watcher reads transcripts with "
                                                "the index's symlink-safe open",
    ("server.session_watch", "index.transcripts"): "... and finds them where the index does",
    ("dreaming.memory_md", "index.tiktoken_offline"): "promoted lines are cut in the chunker's "
                                                      "tokens (maxPromotedSnippetTokens)",
}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def openmemd_imports(path: Path) -> set[str]:
    """Every openmemd module `path` imports, at module level or inside a function (a lazy
    import is still a dependency), relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = module_name(path).split(".")
    package = own if path.name == "__init__.py" else own[:-1]
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                module = ".".join(["openmemd", *base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            names = [module] + [f"{module}.{a.name}" for a in node.names]
        for name in names:
            if name.startswith("openmemd."):
                found.add(name.removeprefix("openmemd."))
    return found


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
            if module_name(p) not in ("", "__main__")}


def matches(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_import_direction():
    problems = []
    used = set()
    for module, path in package_modules().items():
        layer = module.split(".")[0]
        rules = ALLOWED.get(layer)
        if rules is None:
            problems.append(f"{module}: add its layer to ALLOWED (see DESIGN.md)")
            continue
        for target in openmemd_imports(path):
            head = target.split(".")[0]
            if head in (layer, "__version__") or head in rules:
                continue
            excused = [key for key in EXCEPTIONS
                       if matches(module, key[0]) and matches(target, key[1])]
            if excused:
                used.update(excused)
                continue
            problems.append(f"{path.relative_to(ROOT)} imports openmemd.{target}")
    assert problems == []
    assert set(EXCEPTIONS) - used == set(), "exceptions nothing needs any more: remove them"


def test_no_import_circle():
    # Between top-level modules and packages, counting function-level imports too: a lazy
    # import only hides a circle from the interpreter, not from a reader.
    graph: dict[str, set[str]] = {}
    for module, path in package_modules().items():
        layer = module.split(".")[0]
        for target in openmemd_imports(path):
            head = target.split(".")[0]
            if head not in (layer, "__version__"):
                graph.setdefault(layer, set()).add(head)

    def reaches(start: str, goal: str) -> list[str] | None:
        stack, seen = [[start]], {start}
        while stack:
            trail = stack.pop()
            for nxt in sorted(graph.get(trail[-1], ())):
                if nxt == goal:
                    return [*trail, nxt]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append([*trail, nxt])
        return None

    circles = {" -> ".join(c) for layer in graph if (c := reaches(layer, layer))}
    assert circles == set()


def ruff() -> str:
    # ruff is in the test extras, next to this interpreter; a missing ruff fails, not skips.
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert found, "ruff is not installed: pip install -e '.[test]'"
    return found


def test_ruff_clean():
    out = subprocess.run([ruff(), "check", "--output-format", "concise", "daemon", "tests",
                          "bench"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_holds_functions_small():
    # What test_ruff_clean enforces in the package: a function one branch over complexity 15,
    # or one statement over 50, is flagged (pyproject.toml's [tool.ruff.lint]).
    branches = "".join(f"    if x == {i}:\n        x += {i}\n" for i in range(15))
    statements = "".join(f"    y = {i}\n" for i in range(51))
    source = f"def branchy(x):\n{branches}    return x\n\n\ndef long():\n{statements}"
    out = subprocess.run([ruff(), "check", "--output-format", "concise", "--stdin-filename",
                          "daemon/openmemd/example.py", "-"], input=source, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert "C901 `branchy` is too complex (16 > 15)" in out.stdout, out.stdout + out.stderr
    assert "PLR0915 Too many statements (51 > 50)" in out.stdout, out.stdout + out.stderr


def test_no_import_circle_between_modules():
    # Within packages too (issue: api/ had a circle of four files): a module that needs
    # another's names at run time must not be needed by it, even through a lazy import.
    modules = package_modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        for target in openmemd_imports(path):
            # `from openmemd.x import name` also lists `x.name`: keep what is a module
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != module and not module.startswith(target + "."):
                graph.setdefault(module, set()).add(target)
    # a package's __init__ re-exporting its modules is not a circle with them
    for module in list(graph):
        graph[module] = {t for t in graph[module]
                         if not (modules[t].name == "__init__.py" and module.startswith(t + "."))}
    circles = set()
    for start in sorted(graph):
        stack, seen = [[start]], {start}
        while stack:
            trail = stack.pop()
            for nxt in sorted(graph.get(trail[-1], ())):
                if nxt == start:
                    circles.add(" -> ".join(sorted(trail)))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append([*trail, nxt])
    assert sorted(circles) == [], "\n".join(sorted(circles))


# A figure or an experiment's history in package code goes stale where nobody re-measures it:
# the code says why in a line, docs/benchmarks.md holds what was measured, with its command.
_MEASURED = re.compile(r"hit@\d|ndcg|focus@\d|mrr@\d|locomo|cmrc|dev set|\bstop \d{2}\b"
                       r"|\d\.\d{2,} ?-> ?\d\.\d", re.IGNORECASE)


def test_no_benchmark_figure_in_package_code():
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if _MEASURED.search(line)]
    assert found == [], "benchmark figures belong in docs/benchmarks.md:\n" + "\n".join(found)


def test_one_place_finds_the_daemon():
    # "Local or daemon" is decided by api/route.py alone; the others ask it (issue 42).
    importers = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if "openmemd.discovery" in names:
                importers.add(path.relative_to(PACKAGE).as_posix())
    assert importers == {"api/route.py"}
