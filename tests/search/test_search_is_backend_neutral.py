"""search/ is scoring and fusion over `store.base.StoreReader`: it imports nothing of the store
but its interface (and `store.derived`), and names no engine, extension or SQL."""

import ast
import re
from pathlib import Path

SEARCH = Path(__file__).resolve().parents[2] / "daemon" / "openmemd" / "search"
STORE_ALLOWED = {"openmemd.store.base", "openmemd.store.derived"}
# Engines, extensions and SQL: any case for names, upper case for SQL keywords.
NAMES = re.compile(r"sqlite|fts5|vec0|pragma|chunks_fts|chunks_vec|sqlean", re.IGNORECASE)
SQL = re.compile(r"\b(MATCH|SELECT|INSERT|UPDATE|DELETE|WHERE|JOIN)\b")


def modules() -> list[Path]:
    found = sorted(SEARCH.glob("*.py"))
    assert len(found) >= 8  # the folder is where this test thinks it is
    return found


def test_search_imports_only_the_store_interface():
    wrong = []
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            wrong += [f"{path.name}: {n}" for n in names
                      if n.startswith("openmemd.store") and n not in STORE_ALLOWED]
    assert wrong == []


def test_search_names_no_engine_and_no_sql():
    wrong = []
    for path in modules():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if NAMES.search(line) or SQL.search(line):
                wrong.append(f"{path.name}:{n}: {line.strip()}")
    assert wrong == []
