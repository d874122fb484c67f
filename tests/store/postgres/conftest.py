"""PostgreSQL store fixtures: a store on a fresh database, opened from real settings."""

from __future__ import annotations

import pytest


@pytest.fixture
def pg_settings(make_settings, pg_url):
    def make(extra: str = "", *, url: str | None = None):
        return make_settings(f'[store]\nbackend = "postgres"\nurl = "{url or pg_url}"\n'
                             f'namespace = "host/{{agent}}"\n{extra}')

    return make


@pytest.fixture
def pg_store(pg_settings):
    from openmemd.store.postgres import open_postgres_store

    opened = []

    def make(extra: str = "", agent: str = "main", **kw):
        store = open_postgres_store(pg_settings(extra, **kw), agent, long_lived=True)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
