"""Safe full reindex: build a new index beside the old one, then swap the files atomically.

The old index keeps serving searches while the new one is built in `<db>.tmp-<uuid>`, seeded
with the old embedding cache so unchanged text is not embedded again. If anything fails the
temporary files are removed and the old index is untouched.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

from openmemd.store.sqlite import db, health

SIDECARS = health.SIDECARS  # the database and every file SQLite keeps beside it


def temp_path(db_path: Path) -> Path:
    return db_path.with_name(f"{db_path.name}.tmp-{uuid.uuid4().hex[:12]}")


def copy_embedding_cache(conn: db.Connection, old_db: Path) -> int:
    if not old_db.exists():
        return 0
    conn.execute("ATTACH DATABASE ? AS old", (str(old_db),))
    try:
        has = conn.execute("SELECT 1 FROM old.sqlite_master WHERE name = 'embedding_cache'"
                           ).fetchone()
        if not has:
            return 0
        cur = conn.execute("INSERT OR IGNORE INTO main.embedding_cache SELECT provider, model, "
                           "provider_key, hash, embedding, dims, updated_at FROM "
                           "old.embedding_cache")
        return int(cur.rowcount)
    finally:
        conn.execute("DETACH DATABASE old")


def swap_into_place(tmp: Path, db_path: Path) -> None:
    """Move the finished temp index over the live one; on failure put the old one back."""
    backup = db_path.with_name(f"{db_path.name}.backup-{uuid.uuid4().hex[:12]}")
    moved: list[str] = []
    try:
        for suffix in SIDECARS:
            try:
                os.replace(f"{db_path}{suffix}", f"{backup}{suffix}")
                moved.append(suffix)
            except FileNotFoundError:
                pass
        for suffix in SIDECARS:
            if os.path.exists(f"{tmp}{suffix}"):
                os.replace(f"{tmp}{suffix}", f"{db_path}{suffix}")
    except OSError:
        for suffix in moved:
            os.replace(f"{backup}{suffix}", f"{db_path}{suffix}")
        raise
    health.remove_set(backup)


def build_and_swap(db_path: Path, build: Callable[[Path], None]) -> None:
    """Run `build(tmp_path)` to create a complete index, then swap it in."""
    tmp = temp_path(db_path)
    try:
        build(tmp)
        swap_into_place(tmp, db_path)
    except BaseException:
        health.remove_set(tmp)
        raise
