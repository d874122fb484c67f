"""The store contract suite's fixtures: every test of `tests/store/test_contract_*.py` runs once
per backend in `BACKENDS`.

A backend joins the suite by adding one factory `(tmp_path, settings) -> IndexStore`: called
twice with the same arguments it must open the SAME index (the lock test opens a second store
on it, as a second process would).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from openmemd.config import Settings
from openmemd.store import open_store
from openmemd.store.base import IndexStore

StoreFactory = Callable[[Path, Settings], IndexStore]


def make_sqlite_store(tmp_path: Path, settings: Settings) -> IndexStore:
    return open_store(settings, "main")


def make_postgres_store(tmp_path: Path, settings: Settings) -> IndexStore:
    # `settings` names the test's own database (BACKEND_CONFIG), so two calls open one index.
    return open_store(settings, "main")


BACKENDS: dict[str, StoreFactory] = {"sqlite": make_sqlite_store,
                                     "postgres": make_postgres_store}
# Extra settings (TOML) a backend's stores need; may use fixtures (PostgreSQL: a fresh database
# on the session's embedded server).
BACKEND_CONFIG: dict[str, Callable[[pytest.FixtureRequest], str]] = {
    "postgres": lambda request: (f'[store]\nbackend = "postgres"\n'
                                 f'url = "{request.getfixturevalue("pg_url")}"\n'),
}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_another(backend: str, tmp_path: Path, make_settings,
                 request: pytest.FixtureRequest) -> Iterator[Callable[[], IndexStore]]:
    """Opens one more store on the same index (closed after the test)."""
    extra = BACKEND_CONFIG.get(backend)
    settings = make_settings(extra(request) if extra else "")
    opened: list[IndexStore] = []

    def make() -> IndexStore:
        s = BACKENDS[backend](tmp_path, settings)
        opened.append(s)
        return s

    yield make
    for s in reversed(opened):
        s.close()


@pytest.fixture
def store(open_another: Callable[[], IndexStore]) -> IndexStore:
    return open_another()
