"""The embedding cache on a real sqlean connection with the real schema, and vector encodings."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openmemd.store.sqlite import cache
from openmemd.store.sqlite.db import connect
from openmemd.store.sqlite.schema import ensure_schema

KEY = ("local", "e5-small-multilingual", "k" * 64)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    conn, vec = connect(tmp_path / "index.sqlite")
    ensure_schema(conn)
    yield conn, vec
    conn.close()


def vectors(n: int, dims: int = 16, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, dims)).astype(np.float32)


def test_json_round_trip_is_exact_compact_and_stable() -> None:
    special = np.array([0.1, -0.0, 1e-38, 3.4028235e38, -1.17549435e-38, 1 / 3, 7e-45],
                       dtype=np.float32)
    for vec in [*vectors(20, 384), special]:
        text = cache.vector_to_json(vec)
        assert " " not in text and text == cache.vector_to_json(vec)
        back = cache.json_to_vector(text)
        assert back.dtype == np.float32 and np.array_equal(back, vec)
        assert cache.vector_to_json(back) == text  # a second trip changes nothing
    # OpenClaw writes full double precision; that reads back as the nearest float32.
    doubles = [0.1, -0.25, 0.333333333333333]
    assert np.array_equal(cache.json_to_vector(json.dumps(doubles)),
                          np.asarray(doubles, dtype=np.float32))
    with pytest.raises(ValueError, match="NaN"):
        cache.vector_to_json(np.array([1.0, np.nan], dtype=np.float32))


def test_blob_is_float32_little_endian_for_sqlite_vec(db: tuple[Any, Any]) -> None:
    conn, vec_support = db
    vec = vectors(1, 384)[0]
    blob = cache.vector_to_blob(vec)
    assert len(blob) == 4 * 384
    assert np.array_equal(np.frombuffer(blob, dtype="<f4"), vec)
    if vec_support.available:
        assert conn.execute("SELECT vec_length(?)", (blob,)).fetchone()[0] == 384


def test_store_lookup_and_upsert(db: tuple[Any, Any]) -> None:
    conn, _ = db
    vecs = vectors(450)  # more than one lookup group of 400
    items = [(f"h{i:04d}", vecs[i]) for i in range(450)]
    cache.store(conn, *KEY, items, now_ms=1_000)
    assert cache.count(conn) == 450

    wanted = [h for h, _ in items] + ["missing", "h0001"]
    found = cache.lookup(conn, *KEY, wanted)
    assert set(found) == {h for h, _ in items}
    assert all(np.array_equal(found[h], v) for h, v in items)
    assert cache.lookup(conn, "local", KEY[1], "other-key", ["h0000"]) == {}
    assert cache.lookup(conn, *KEY, []) == {}

    newer = vectors(1, seed=9)[0]
    cache.store(conn, *KEY, [("h0000", newer)], now_ms=2_000)
    assert cache.count(conn) == 450
    assert np.array_equal(cache.lookup(conn, *KEY, ["h0000"])["h0000"], newer)
    row = conn.execute("SELECT dims, updated_at FROM embedding_cache WHERE hash = 'h0000'")
    assert row.fetchone() == (16, 2_000)


def test_damaged_rows_are_misses(db: tuple[Any, Any]) -> None:
    conn, _ = db
    cache.store(conn, *KEY, [("good", vectors(1)[0])], now_ms=1)
    conn.execute("INSERT INTO embedding_cache VALUES (?, ?, ?, 'bad', '[1, 2', 2, 1)", KEY)
    conn.execute("INSERT INTO embedding_cache VALUES (?, ?, ?, 'short', '[1, 2]', 3, 1)", KEY)
    assert set(cache.lookup(conn, *KEY, ["good", "bad", "short"])) == {"good"}


def test_prune_keeps_the_newest_entries(db: tuple[Any, Any]) -> None:
    conn, _ = db
    vecs = vectors(10)
    for i in range(10):  # written at t = 100, 101, ... 109
        cache.store(conn, *KEY, [(f"h{i}", vecs[i])], now_ms=100 + i)
    cache.store(conn, *KEY, [("h0", vecs[0])], now_ms=500)  # rewritten: now the newest

    assert cache.prune(conn, 0) == 0 and cache.count(conn) == 10  # 0 = no cap
    assert cache.prune(conn, 20) == 0
    assert cache.prune(conn, 4) == 6
    left = {r[0] for r in conn.execute("SELECT hash FROM embedding_cache")}
    assert left == {"h0", "h7", "h8", "h9"}
    assert cache.prune(conn, 4) == 0
