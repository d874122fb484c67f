"""`IndexStore` on PostgreSQL: one namespace of a shared database.

Opening does not connect: the schema is ensured on first use (and again after a failed
attempt), so a daemon starts while the server is down, answers "unavailable" meanwhile, and
works as soon as the server is back.

Rebuild: `build` fills a staging namespace (`<ns>` + STAGING_SUFFIX, a name no configured
namespace can take) under the same advisory lock; one transaction then deletes the old rows and
renames the staging ones, so readers see the old index until that commit and the new one
after. Heal: PostgreSQL keeps its own storage consistent, so there is no damaged file to move
aside; `heal` empties the namespace (the shared embedding cache stays) for a refill. Neither
forgets which workspace fills the namespace (owner.py): only `adopt` changes that.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from psycopg.abc import Params

from openmemd.config.store_url import postgres_location
from openmemd.errors import BadRequestError
from openmemd.log import get_logger
from openmemd.store.base import Recovery, StoreWriter, VectorMode
from openmemd.store.postgres import fts, owner, schema
from openmemd.store.postgres.builds import IndexBuilds
from openmemd.store.postgres.connect import Outage, PgConnectSpec, connect, make_pool, translated
from openmemd.store.postgres.generation import ContentGeneration
from openmemd.store.postgres.reader import PgReader
from openmemd.store.postgres.schema import BULK_TIMEOUT_SQL, SCHEMA
from openmemd.store.postgres.session import WriterSession
from openmemd.store.postgres.writer import PgWriter

T = TypeVar("T")
log = get_logger(__name__)
STAGING_SUFFIX = "\x1frebuild"
NS_TABLES = ("files", "chunks", "skipped", "ns_meta", "ns_stats", "ns_lexemes")
MAINTAIN_AFTER_ROWS = 1000  # ANALYZE after this many written rows


class PgStore:
    backend = "postgres"
    fts_tokenizer = fts.TOKENIZER_ID

    def __init__(self, target: PgConnectSpec, namespace: str, search_namespaces: tuple[str, ...],
                 *, pool_size: int, workspace: str | None) -> None:
        """`workspace`: the workspace this store's writer fills (owner.workspace_owner); None:
        its writer neither records nor checks one (tests, benchmarks)."""
        self.target = target
        self.namespace = namespace
        self.workspace = workspace
        self.search_namespaces = search_namespaces or (namespace,)
        self._pool = make_pool(target, pool_size)
        self._ready_lock = threading.Lock()
        self._server: dict[str, str] = {}  # versions, once the schema is ensured
        self._builds = IndexBuilds(target)
        self._session: WriterSession | None = None
        self._writer: PgWriter | None = None
        self._outage = Outage(target)
        self._generation = ContentGeneration(namespace)
        self._reader = PgReader(self._pool, target, namespace, self.search_namespaces,
                                self._ensure_ready, self._outage, self._generation)
        self._analyzed_at = 0

    # -- first use ------------------------------------------------------------------------------
    def _ensure_ready(self) -> None:
        """The schema ensured, once, and again after a statement found part of it gone."""
        if self._server and not self._outage.schema_damaged:
            return
        with self._ready_lock:
            if self._server and not self._outage.schema_damaged:
                return
            conn = connect(self.target)
            try:
                with translated(self.target, "preparing the schema in"):
                    schema.ensure_schema(conn)
                    self._generation.adopt(conn)
                    versions = conn.execute(
                        "SELECT current_setting('server_version'), (SELECT extversion FROM"
                        " pg_extension WHERE extname = 'vector')").fetchone()
                    self._builds.known(schema.hnsw_dims(conn))
            finally:
                conn.close()
            self._outage.schema_damaged = False
            if self._server:  # repaired: pgvector may have been made again, with new types
                self._pool.drain()  # that connections made before do not know
                if self._session is not None:
                    self._session.close()  # reconnects (and locks again) at its next statement
            self._server = {"server": str(versions[0]) if versions else "",
                            "pgvector": str(versions[1]) if versions else ""}
            log.info("store_ready", backend="postgres", url=self.target.shown,
                     namespace=self.namespace, server=self._server["server"],
                     pgvector=self._server["pgvector"])

    # -- the protocol ---------------------------------------------------------------------------
    def location(self) -> str:
        return postgres_location(self.target.url, self.namespace)

    def writer(self) -> StoreWriter:
        if self._writer is None:
            self._ensure_ready()
            session = WriterSession(self.target, self.namespace, self.workspace)
            # takes the lock now: a second writer fails here, as does another workspace
            session.connection()
            self._session = session
            self._writer = PgWriter(session, self.namespace, outage=self._outage,
                                    ready=self._ensure_ready)
        return self._writer

    def reader(self) -> PgReader:
        return self._reader

    def exists(self) -> bool:
        row = self._reader._run(lambda conn: conn.execute(
            f"SELECT EXISTS (SELECT 1 FROM {SCHEMA}.ns_meta WHERE ns = %s AND key <> %s) OR"
            f" EXISTS (SELECT 1 FROM {SCHEMA}.files WHERE ns = %s)",
            (self.namespace, owner.KEY, self.namespace)).fetchone())
        return bool(row and row[0])

    def rebuild(self, build: Callable[[StoreWriter], T]) -> T:
        main = self.writer()
        assert self._session is not None
        staging_ns = self.namespace + STAGING_SUFFIX
        staging = PgWriter(self._session, staging_ns, graph=False)
        with main.transaction():
            self._clear(staging_ns)  # left by a rebuild that died half-way
        try:
            result = build(staging)
            self._swap(main, staging_ns)
        except BaseException:
            # Half a rebuild is of no use (the swap is all or nothing), and its rows hold
            # space: on a full disk, exactly what is missing.
            try:
                with main.transaction():
                    self._clear(staging_ns)
            except Exception:  # the server may be gone; the next rebuild clears it
                log.warning("store_staging_left", namespace=self.namespace)
            raise
        log.info("store_rebuilt", namespace=self.namespace)
        return result

    def _swap(self, main: StoreWriter, staging_ns: str) -> None:
        with main.transaction():
            self._clear(self.namespace)
            # Renaming a row rewrites it, and once the HNSW index exists every rewritten row
            # with a vector is inserted into the graph: hours at 1M chunks (docs/postgres-scale.md).
            # That is the price of the swap (there is no cheaper way to move rows between
            # namespaces); the staging rows were written without their vector
            # size, so this is the only time they join the graph. A timeout would only throw
            # the whole rebuild away at its last step, every time.
            self._execute("SET LOCAL statement_timeout = 0", None)
            for table in NS_TABLES:
                sizes = ", dims = vector_dims(embedding)" if table == "chunks" else ""
                self._execute(f"UPDATE {SCHEMA}.{table} SET ns = %s{sizes} WHERE ns = %s",
                              (self.namespace, staging_ns))

    def _clear(self, ns: str) -> None:
        """Empty `ns`, except for which workspace fills it."""
        self._execute(BULK_TIMEOUT_SQL, None)
        for table in NS_TABLES:
            kept = f" AND key <> '{owner.KEY}'" if table == "ns_meta" else ""
            self._execute(f"DELETE FROM {SCHEMA}.{table} WHERE ns = %s{kept}", (ns,))

    def _execute(self, sql: str, params: Params | None) -> None:
        assert self._session is not None
        with translated(self.target, "writing to"):
            self._session.connection().execute(sql, params)

    def heal(self, reason: str) -> Recovery:
        main = self.writer()
        with main.transaction():
            self._clear(self.namespace)
        self._generation.refilled()  # by the caller, from the Markdown
        kept = self._reader.stats(None).cache_entries  # the shared cache, all of it kept
        log.warning("store_namespace_emptied", namespace=self.namespace, reason=reason,
                    cache_kept=kept)
        return Recovery(reason=reason, moved_to=None, salvaged_vectors=kept)

    def adopt(self) -> str:
        """Make the namespace this store's workspace's (`openmemd store adopt`), under the
        writer lock: refused while a daemon writes it. Returns the workspace it was filled
        from ("" if none was recorded)."""
        if self.workspace is None:
            raise BadRequestError("adopting a namespace needs the workspace that adopts it")
        self._ensure_ready()
        session = WriterSession(self.target, self.namespace, None)
        try:
            with translated(self.target, "adopting a namespace in"):
                return owner.adopt(session.connection(), self.namespace, self.workspace)
        finally:
            session.close()

    def damage(self) -> str:
        return ""  # nothing can replace the database under us the way a file can be

    def vector_mode(self) -> VectorMode:
        try:
            self._ensure_ready()
        except Exception as exc:
            return VectorMode(False, "pgvector", reason=str(exc))
        return VectorMode(True, "pgvector", version=self._server.get("pgvector", ""))

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "backend": "postgres", "url": self.target.shown, "namespace": self.namespace,
            "searchNamespaces": list(self.search_namespaces),
            "schemaVersion": schema.SCHEMA_VERSION}
        try:
            self._reader._run(lambda conn: conn.execute("SELECT 1"))
        except Exception as exc:
            out.update(reachable=False, error=str(exc))
            return out
        out.update(reachable=True, serverVersion=self._server.get("server", ""),
                   pgvectorVersion=self._server.get("pgvector", ""))
        if self._builds.building:  # searches use the old index or an exact scan meanwhile
            out["indexBuilding"] = self._builds.building
        if self._builds.last_error:
            out["indexBuildError"] = self._builds.last_error
        return out

    def maintain(self) -> None:
        """Periodic upkeep, by the daemon that writes this namespace: start the index builds
        (builds.py: the HNSW index of a vector size grown past schema.HNSW_MIN_VECTORS, the
        keyword sample index if the database predates it; in the background, CONCURRENTLY) and
        ANALYZE once enough rows changed (the planner's choice between HNSW and a scan needs
        it). Cheap when nothing changed: nothing runs until MAINTAIN_AFTER_ROWS rows were
        written, except builds that did not finish last time (failed, or left to another
        daemon that may have died since), which every call looks at again. On a connection of
        its own, so it never lands inside the writer's transaction whatever thread calls it."""
        if self._writer is None:
            return
        written = self._writer.rows_written
        if self._analyzed_at and written - self._analyzed_at < MAINTAIN_AFTER_ROWS:
            if not self._builds.settled:
                self._builds.start()
            return
        self._builds.start()
        conn = connect(self.target)
        try:  # watched: a table found gone is repaired before the heal that follows
            with self._outage.watch(), translated(self.target, "maintaining"):
                # A whole-table statement (seconds at 1M chunks); not behind an index build
                # (it holds the lock ANALYZE needs for all of its minutes): autovacuum
                # analyzes, and so does the next call.
                conn.execute(f"SET statement_timeout = '{schema.BULK_TIMEOUT}'")
                conn.execute(f"ANALYZE (SKIP_LOCKED) {SCHEMA}.chunks")
        finally:
            conn.close()
        self._analyzed_at = max(written, 1)

    def wait_for_builds(self, timeout: float | None = None) -> bool:
        """True once no index build runs (benchmarks and tests; the daemon never waits)."""
        return self._builds.wait(timeout)

    def close(self) -> None:
        self._builds.close()  # a build cancelled here is redone by the next maintain()
        if self._session is not None:
            self._session.close()
        self._session = self._writer = None
        try:
            self._pool.close(timeout=2)
        except psycopg.Error:
            pass
