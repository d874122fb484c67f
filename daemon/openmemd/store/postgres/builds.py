"""The indexes `PgStore.maintain` builds, built on a thread of their own.

An HNSW build takes minutes to hours (20 minutes at 1M chunks here, hours at 10M). `maintain`
runs on the daemon's writer thread, so building there would hold up every sync of the
namespace for as long -- edits unindexed, `openmemd stop` waiting on the build. The builds
run CONCURRENTLY on their own connection instead: writers of every namespace, this one's
included, keep writing meanwhile, and searches use the old index (or the exact scan) until
the new one is valid. Closing the store cancels a build in progress; the invalid index it
leaves is dropped and redone by whichever daemon next asks (`schema._build_concurrently`).
"""

from __future__ import annotations

import threading

import psycopg
from psycopg.rows import TupleRow

from openmemd.log import get_logger
from openmemd.store.postgres import schema
from openmemd.store.postgres.connect import PgConnectSpec, connect, translated
from openmemd.store.postgres.schema import SCHEMA, Build

log = get_logger(__name__)


class IndexBuilds:
    """At most one build thread per store: the keyword sample index if the database predates
    it, then the HNSW index of each vector size grown past schema.HNSW_MIN_VECTORS."""

    def __init__(self, target: PgConnectSpec) -> None:
        self._target = target
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._conn: psycopg.Connection[TupleRow] | None = None
        self._closed = False
        self.hnsw: set[int] = set()  # vector sizes known to have their HNSW index
        self.sample_index = False  # the keyword sample index is known to exist
        self.building: str | None = None  # for `status`
        self.last_error: str | None = None
        # The last run built or found every index it looked at (none failed, none was being
        # built elsewhere): only then may upkeep wait for new rows before looking again.
        self.settled = False

    def known(self, hnsw: set[int]) -> None:
        """What exists now, after the schema was ensured (again, after a repair that may have
        lost indexes): the next upkeep looks for everything missing."""
        self.hnsw = hnsw
        self.sample_index = False
        self.settled = False

    def start(self) -> None:
        """Build what is missing, unless a build is under way (the next call looks again)."""
        with self._lock:
            if self._closed or (self._thread is not None and self._thread.is_alive()):
                return
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name="openmemd-pg-index-builds")
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """True once no build runs (for benchmarks and tests: the daemon never waits)."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return thread is None or not thread.is_alive()

    def close(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._closed = True
            conn, thread = self._conn, self._thread
        if conn is not None:
            try:
                conn.cancel_safe(timeout=timeout)
            except (psycopg.Error, OSError):
                pass  # the server is gone: so is the build
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        try:
            with translated(self._target, "building indexes in"):
                conn = connect(self._target)
                try:
                    with self._lock:
                        if self._closed:
                            return
                        self._conn = conn
                    self.settled = self._build_missing(conn)
                finally:
                    with self._lock:
                        self._conn = None
                    conn.close()
            self.last_error = None
        except Exception as exc:  # upkeep: the next maintain() tries again
            self.settled = False
            if not self._closed:
                self.last_error = str(exc)
                log.warning("store_index_build_failed", index=self.building, error=str(exc))
        finally:
            self.building = None

    def _build_missing(self, conn: psycopg.Connection[TupleRow]) -> bool:
        """Build what is missing; False if an index was left to another daemon's build."""
        conn.execute("SET statement_timeout = 0")  # the whole point is a long statement
        built, settled = False, True
        if not self.sample_index:
            self.building = schema.SAMPLE_INDEX
            outcome = schema.ensure_fts_sample(conn)
            if outcome is Build.BUILT:
                built = True
                log.info("store_fts_sample_built")
            self.sample_index = outcome is not Build.ELSEWHERE
            settled = self.sample_index
        for dims in schema.dims_needing_hnsw(conn):
            if dims in self.hnsw:
                continue
            self.building = f"{schema.HNSW_PREFIX}{dims}"
            outcome = schema.ensure_hnsw(conn, dims)
            if outcome is Build.BUILT:
                built = True
                log.info("store_hnsw_built", dims=dims)
            if outcome is Build.ELSEWHERE:  # another daemon's build: looked at next time
                settled = False
            else:
                self.hnsw.add(dims)
        if built:  # the planner weighs the new index by fresh statistics
            conn.execute(f"ANALYZE (SKIP_LOCKED) {SCHEMA}.chunks")
        return settled

