"""The storage seam holds (issue 12): indexing and search reach storage only through the
interface (`store.base`), the library API picks the backend with `store.open_store`, and outside
a backend's package no code imports a database driver or a backend, and no string holds SQL,
a PRAGMA, FTS5 or vec0 syntax, or the name of one of the index's tables. Docstrings and
comments may mention them."""

from __future__ import annotations

import ast
import re

from test_architecture import PACKAGE, openmemd_imports, package_modules

BACKENDS = ("store/sqlite/", "store/postgres/")
# `open_store` picks a backend: the one place outside the backends that may import them.
DISPATCH = "store/__init__.py"

DRIVERS = ("sqlite3", "sqlean", "sqlite_vec", "psycopg", "psycopg_pool", "pgvector")
SQL = re.compile(
    r"\b(SELECT\s+.+\s+FROM|INSERT\s+(OR\s+\w+\s+)?INTO|DELETE\s+FROM|UPDATE\s+\w+\s+SET|"
    r"CREATE\s+(VIRTUAL\s+)?TABLE|DROP\s+TABLE|PRAGMA|ATTACH\s+DATABASE|BEGIN\s+IMMEDIATE)\b"
    r"|\bfts5\b|\bvec0\b|\bbm25\(|\bMATCH\s+\?|\bchunks_fts\b|\bchunks_vec\b"
    r"|\bembedding_cache\b|\bsqlite_master\b",
    re.IGNORECASE | re.DOTALL)


def store_imports(package: str) -> dict[str, set[str]]:
    """Each module of `package` with the `store` modules it imports."""
    return {module: {t for t in openmemd_imports(path) if t.split(".")[0] == "store"}
            for module, path in package_modules().items()
            if module.split(".")[0] == package}


def test_index_and_search_use_only_the_store_interface() -> None:
    allowed = ("store.base", "store.derived")
    wrong = {m: sorted(t for t in targets if not t.startswith(allowed))
             for package in ("index", "search")
             for m, targets in store_imports(package).items()}
    assert {m: t for m, t in wrong.items() if t} == {}


def test_api_uses_only_open_store_and_the_interface() -> None:
    wrong = {m: sorted(t for t in targets
                       if t not in ("store", "store.open_store", "store.warm_in_background",
                                    "store.open_location", "store.is_database",
                                    "store.check_backend", "store.check_index")
                       and not t.startswith("store.base"))
             for m, targets in store_imports("api").items()}
    assert {m: t for m, t in wrong.items() if t} == {}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _problems(rel: str, source: str) -> list[str]:
    tree = ast.parse(source)
    docs = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            top = name.split(".")[0]
            backend = name.startswith(("openmemd.store.sqlite", "openmemd.store.postgres"))
            if top in DRIVERS or (backend and rel != DISPATCH):
                out.append(f"{rel}:{node.lineno} imports {name}")
                break
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docs and SQL.search(node.value)):
            out.append(f"{rel}:{node.lineno} holds storage syntax: {node.value[:60]!r}")
    return out


def test_no_storage_details_outside_the_backends() -> None:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(BACKENDS):
            continue
        problems.extend(_problems(rel, path.read_text(encoding="utf-8")))
    assert problems == []


def test_the_check_sees_sql() -> None:
    source = ('"""Docstrings may say SELECT x FROM y."""\n'
              'x = "SELECT id FROM chunks WHERE path = ?"\nimport sqlite3\n'
              'from openmemd.store.sqlite import db\n')
    found = _problems("search/probe.py", source)
    assert sorted(f.split(" ", 1)[0] for f in found) == [
        "search/probe.py:2", "search/probe.py:3", "search/probe.py:4"]
