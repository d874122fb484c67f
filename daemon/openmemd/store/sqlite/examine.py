"""`openmemd doctor`'s look at a SQLite index file: read-only, nothing renamed or created.

In the order the problems hide each other: the path (a state dir that is a file, a FIFO,
refused by `os.stat` and never opened), the permissions (non-blocking opens for reading and
for writing, nothing written), the first bytes
(0 bytes, a file that is not SQLite), then SQLite itself (its schema and `PRAGMA quick_check`).
A search or an index run moves a damaged file aside and rebuilds it; doctor only says so.
"""

from __future__ import annotations

import os
from pathlib import Path

from openmemd.store.base import IndexUnusableError
from openmemd.store.checks import BackendCheck
from openmemd.store.sqlite import db, health, index_file

NAME = "index"
HEADER = b"SQLite format 3\x00"
HEADER_BYTES = 100  # SQLite's database header
REBUILD = ("openmemd index moves it aside (.corrupt-...) and rebuilds it from the Markdown "
           "(embeddings that cannot be read are computed again)")


def content_problem(head: bytes, size: int) -> tuple[str, str]:
    """What the first bytes of a file of `size` bytes say is wrong with it as an index, and the
    fix (('', '') when nothing: it starts as a SQLite database does)."""
    if size == 0:  # SQLite would take it for a new, empty database
        return ("0 bytes (truncated: even an empty index holds its tables; its embeddings "
                "are lost)", "openmemd index rebuilds it from the Markdown (the embeddings are "
                "computed again)")
    prefix = head[:len(HEADER)]
    if prefix != HEADER[:len(prefix)]:
        return "not a SQLite database (its first bytes are not SQLite's header)", REBUILD
    if size < HEADER_BYTES:
        return f"truncated to {size} bytes", REBUILD
    return "", ""


def _head(path: Path) -> tuple[bytes, int]:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        return os.read(fd, HEADER_BYTES), os.fstat(fd).st_size
    finally:
        os.close(fd)


def _sqlite_problem(path: Path) -> tuple[str, int]:
    """SQLite's own verdict ('' when sound) and the chunks the index holds. Opened read-only;
    immutable (no -wal/-shm created) unless a process has it open (its -wal is there)."""
    in_use = Path(f"{path}-wal").exists()
    conn = None
    try:
        conn, _vec = db.connect(path, readonly=True, immutable=not in_use)
        problem = health.quick_check(conn, path)
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if problem or "chunks" not in names:
            return problem or "no tables: an empty database", 0
        return "", int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    except db.DatabaseError as exc:
        return str(exc), 0
    finally:
        if conn is not None:
            conn.close()


def _failed(found: index_file.FileProblem) -> BackendCheck:
    return BackendCheck(NAME, problem=found.message, fatal=True, fix=found.fix)


def examine(path: Path) -> BackendCheck:
    """The index file at `path`, read-only: what is wrong with it and the fix, or its size."""
    # read, then written (a writer opens it so: a search catching up, the daemon), not changed
    found = (index_file.open_problem(path, write=False)
             or index_file.open_problem(path, write=True))
    if found is not None:
        return _failed(found)
    if not path.exists():
        return BackendCheck(NAME, f"{path} not created yet (the first index or search builds "
                            "it)")
    try:
        head, size = _head(path)
        problem, fix = content_problem(head, size)
        chunks = 0
        if not problem:
            (problem, chunks), fix = _sqlite_problem(path), REBUILD
    except OSError as exc:  # changed under us since the look above
        return _failed(index_file.from_os_error(exc, path, write=False))
    except IndexUnusableError as exc:
        return BackendCheck(NAME, problem=str(exc), fatal=True, fix="run openmemd doctor again")
    if problem:
        return BackendCheck(NAME, problem=f"{path} is damaged: {problem}", fatal=True, fix=fix)
    return BackendCheck(NAME, f"{path}: {size / (1 << 20):.1f} MiB, {chunks} chunks, sound "
                        "(schema and quick_check)")
