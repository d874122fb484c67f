"""The storage interface: what indexing, search and status need from an index, whatever holds it.

An index is OpenClaw's model -- files, their chunks (text, keyword rows, one vector each), an
embedding cache and a meta row -- plus openmemd's bookkeeping (file signals, skipped files).
Two backends implement it: `store.sqlite` (the default, one file per agent, OpenClaw's format)
and `store.postgres` (many daemons sharing one database, one namespace each). Nothing outside a
backend's package names its engine, its SQL or its tables.

Three roles:
- `IndexStore`: one index, opened by `store.open_store(settings, agent_id)`; hands out the one
  writer and per-thread readers, rebuilds safely, reports its own status.
- `StoreWriter`: the write API, rows in transactions; one open per index (its writer lock).
  Every mutation runs inside `transaction()`; nothing is visible to readers before that
  transaction commits.
- `StoreReader`: candidates for the two search legs, scores for given ids, and stats. A reader
  never writes and never blocks on the writer.

Scoring and fusion live in `search/`; a backend returns raw measurements (`relevance`,
`cosine`) and `search/` turns them into scores, so every backend ranks the same way.

Vectors cross this interface as float32 numpy arrays; each backend stores them as it likes.
Errors: a backend raises `errors.IndexLockedError` when another writer holds the index,
`IndexDamagedError` when the stored index is damaged (the caller heals it, see
`IndexStore.heal`), `DiskFullError` when there is no space, and `StoreUnavailableError` when
the storage cannot be reached right now (a server down; `IndexUnusableError`: a file it may
not open, which is kept); all are `UnavailableError`s.
`RowRejectedError` means one file's rows were refused; only that file is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np

from openmemd.errors import BadRequestError, UnavailableError
from openmemd.text.tokens import QueryTerms

T = TypeVar("T")

Vector = np.ndarray  # 1-D float32
# The `model` of chunks indexed without an embedding provider (keyword-only).
FTS_ONLY_MODEL = "fts-only"


# -- errors ---------------------------------------------------------------------------------------

class IndexDamagedError(UnavailableError):
    """The stored index is damaged; `IndexStore.heal` replaces it and it is refilled from the
    Markdown."""


class DiskFullError(UnavailableError):
    """No space left for the index; the daemon retries with backoff."""


class StoreUnavailableError(UnavailableError):
    """The storage cannot be reached right now (e.g. the database server is down)."""


class IndexUnusableError(StoreUnavailableError):
    """The index file cannot be opened for a reason that is not damage (permissions, a FIFO or
    a folder in its place, a state dir that is a regular file): the file is kept, and the
    message names it and the fix. Never healed by moving the file aside."""


class RowRejectedError(BadRequestError):
    """The backend refused one file's rows (a constraint, a value it cannot store): the sync
    skips that file only."""


# -- rows -----------------------------------------------------------------------------------------

class StoredFile(NamedTuple):
    """What the index knows of a file, minus its hash: the same fields in the same order as the
    walk's `index.scan.FileEntry`, so "unchanged" is one tuple comparison."""

    path: str
    source: str
    mtime: int
    size: int


class FileSignature(NamedTuple):
    """A file row plus its signals (ctime, inode): the shape of `index.scan.FileEntry`."""

    path: str
    source: str
    mtime: int
    size: int
    ctime_ns: int
    ino: int


class Skipped(NamedTuple):
    """A file that could not be indexed, remembered until it changes."""

    signature: tuple[str, int, int, int, int]  # source, mtime, size, ctime_ns, ino
    path: str  # printable form of the name
    reason: str


@dataclass(frozen=True)
class ChunkRow:
    """One chunk to store. `fts_text` is the text prepared for keyword search
    (`text.tokens.fts_index_text`); `text` is always the original. `vector` is None until the
    chunk's embedding arrives."""

    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    hash: str
    model: str
    text: str
    fts_text: str
    vector: Vector | None
    updated_at: int  # ms


@dataclass(frozen=True)
class StoredFileRecord:
    """A file row with everything a copy of the index needs."""

    path: str
    source: str
    hash: str
    mtime: int
    size: int
    ctime_ns: int  # 0 when unknown (an OpenClaw index): the file is hashed once more
    ino: int


class PendingChunk(NamedTuple):
    """A chunk still waiting for its vector."""

    id: str
    hash: str
    text: str


class PendingFile(NamedTuple):  # a file with chunks waiting (the fill's order is by file)
    path: str
    source: str
    chunks: int


@dataclass(frozen=True)
class CacheKey:
    """Which embedding function produced a cached vector (OpenClaw's cache key, minus hash)."""

    provider: str
    model: str
    provider_key: str


@dataclass(frozen=True)
class CacheEntry:
    key: CacheKey
    hash: str
    vector: Vector
    updated_at: int  # ms


@dataclass(frozen=True)
class CandidateFilter:
    """Which chunks a search leg may return. `model`: only chunks embedded by this model (the
    vector leg always sets it). `skip_derived`: leave out derived files (dreaming reports,
    `store.derived`)."""

    sources: tuple[str, ...] | None = None
    model: str | None = None
    skip_derived: bool = False

    @classmethod
    def of_search(cls, sources: Sequence[str] | None, *, derived: bool) -> CandidateFilter:
        """A search's filter: its `sources` (None: all), derived files only if `derived`
        (`query.dreaming_reports`)."""
        return cls(sources=tuple(sources) if sources else None, skip_derived=not derived)


@dataclass(frozen=True)
class MeasuredChunk:
    """A chunk one search leg found, with what the leg measured (the search pipeline's
    `search.candidate.Candidate` is what it becomes there).

    Keyword leg: `measure` is the chunk's keyword relevance, ≥ 0 and higher is better (SQLite:
    −bm25 rank). Vector leg: `measure` is the cosine similarity to the query.
    `namespace` is where the chunk lives ("" for a backend without namespaces).
    """

    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    measure: float
    namespace: str = ""


class StoredChunk(NamedTuple):
    """A stored chunk's place and text (`get` of another namespace's file, which is not on
    this machine, reads it from these)."""

    source: str
    start_line: int
    end_line: int
    text: str


@dataclass(frozen=True)
class IndexStats:
    files: int
    chunks: int
    cache_entries: int
    vectors: int  # chunks with a vector; -1 when the backend cannot count them
    pending_vectors: int  # chunks of the asked model still waiting for a vector
    by_source: Mapping[str, Mapping[str, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class VectorMode:
    """How the vector leg runs, for `status` (e.g. "sqlite-vec", "in-process", "pgvector")."""

    available: bool
    mode: str
    version: str = ""
    reason: str = ""


# -- the three roles ------------------------------------------------------------------------------

class StoreReader(Protocol):
    """Reads for search and status. One per thread unless `thread_safe`; never writes."""

    # True when several threads may call this reader at once (a server behind a connection
    # pool): a search then issues its two legs together and waits for the slower, not both.
    thread_safe: bool

    def keyword_candidates(self, terms: QueryTerms, *, limit: int,
                           where: CandidateFilter) -> list[MeasuredChunk]:
        """The `limit` chunks most relevant to `terms`, best first (ties by id). [] when the
        query has no searchable term or the keyword index is unusable."""
        ...

    def keyword_relevance(self, terms: QueryTerms, ids: Sequence[str]) -> dict[str, float]:
        """Keyword relevance (as in `MeasuredChunk.measure`) of these chunks; ids holding no query
        term are absent."""
        ...

    def vector_candidates(self, query: Vector, *, limit: int,
                          where: CandidateFilter) -> list[MeasuredChunk]:
        """The `limit` chunks of `where.model` nearest to `query` (a unit vector) by cosine,
        best first (ties by id). [] when no vector of that size is stored."""
        ...

    def cosines(self, query: Vector, ids: Sequence[str], *, model: str) -> dict[str, float]:
        """Cosine similarity of the query to these chunks (point lookups, never a scan);
        chunks without a vector of `model` are absent."""
        ...

    def chunks_by_path(self, patterns: Sequence[str], *, limit: int,
                       where: CandidateFilter) -> list[MeasuredChunk]:
        """Chunks of the files whose path matches one of `patterns`, where `*` stands for any
        run of characters (`/` included) and every other character for itself; ordered by
        path descending (the newest dated note first), then line; at most `limit`; `measure`
        is 0. A search naming a date fetches that day's notes this way (`search/dated.py`):
        by where they are, whatever they say."""
        ...

    def file_mtimes(self, paths: Sequence[str]) -> dict[str, int]:
        """Indexed mtime (ms) of these files; unknown paths are absent."""
        ...

    def stored_files(self) -> dict[str, StoredFile]: ...

    def skipped_files(self) -> list[Skipped]:
        """The files the sync could not index, with why (`status` names them)."""
        ...

    def file_chunks(self, path: str, namespace: str) -> list[StoredChunk]:
        """The chunks of `path` in `namespace` (one the reader searches; "" the own), ordered
        by (start_line, end_line); [] for a path not indexed there or a namespace not
        searched."""
        ...

    def read_meta(self) -> dict[str, Any] | None:
        """The index identity written by `StoreWriter.write_meta`, or None."""
        ...

    def stats(self, model: str | None, *, derived: bool = True) -> IndexStats: ...

    def count_pending_vectors(self, model: str, *, derived: bool = True) -> int:
        """Chunks of `model` still waiting for a vector (`derived=False`: derived files' left
        out), which a search meanwhile finds by keyword only."""
        ...

    # whole-index export, for `openmemd store copy` (streamed: an index may not fit in memory)
    def export_files(self) -> Iterator[StoredFileRecord]: ...
    def export_chunks(self) -> Iterator[ChunkRow]:
        """Every chunk with its vector (None while pending), ordered by (path, id): a file's
        chunks come together, so a copy writes each file whole (`replace_chunks`) in one
        transaction without holding the index in memory."""
        ...

    def export_cache(self) -> Iterator[CacheEntry]: ...


def chunks_of_files(reader: StoreReader, paths: Iterable[str], *, limit: int,
                    where: CandidateFilter) -> list[MeasuredChunk]:
    """`StoreReader.chunks_by_path` for these files exactly. `*` is the patterns' only
    wildcard, so a name holding one cannot be asked for exactly and is left out."""
    exact = sorted({p for p in paths if "*" not in p})
    return reader.chunks_by_path(exact, limit=limit, where=where) if exact else []


class StoreWriter(Protocol):
    """An index's write API: rows written in transactions (`transaction()`). A store opens one
    at a time (`IndexStore.writer`); what is written is `index.sync`'s to decide."""

    def transaction(self) -> AbstractContextManager[None]:
        """One atomic write; rolled back on any exception. Not re-entrant."""
        ...

    # files
    def load_signatures(self) -> dict[str, FileSignature]: ...
    def file_hash(self, path: str) -> str | None: ...
    def upsert_file(self, path: str, source: str, file_hash: str, mtime: int, size: int,
                    ctime_ns: int, ino: int) -> None: ...
    def touch_file(self, path: str, mtime: int, size: int, ctime_ns: int, ino: int) -> None: ...
    def delete_file(self, path: str) -> None:
        """The file, its chunks, keyword rows, vectors and signals."""
        ...

    # chunks and vectors
    def replace_chunks(self, path: str, rows: Sequence[ChunkRow]) -> None:
        """Replace every chunk of `path` with `rows` (vectors included where given)."""
        ...

    # Chunks waiting for a vector (of `paths` only, in that order, when given); `derived=False`
    # leaves out derived files' (store/derived.py), not embedded unless searched.
    def pending_vectors(self, model: str, limit: int, paths: Sequence[str] | None = None
                        ) -> list[PendingChunk]: ...
    def count_pending_vectors(self, model: str, *, derived: bool = True) -> int: ...
    def pending_files(self, model: str, *, derived: bool = True) -> list[PendingFile]: ...
    def set_vectors(self, vectors: Sequence[tuple[str, Vector]]) -> None:
        """Store each chunk id's vector (ids that no longer exist are ignored)."""
        ...

    # the embedding cache
    def cache_lookup(self, key: CacheKey, hashes: Sequence[str]) -> dict[str, Vector]: ...
    def cache_store(self, key: CacheKey, items: Sequence[tuple[str, Vector]],
                    now_ms: int) -> None: ...
    def cache_prune(self, max_entries: int) -> int:
        """Delete the least recently written entries beyond `max_entries`; the number deleted."""
        ...

    # meta and bookkeeping
    def read_meta(self) -> dict[str, Any] | None: ...
    def write_meta(self, meta: Mapping[str, Any]) -> None: ...
    def load_skipped(self) -> dict[bytes, Skipped]: ...
    def set_skipped(self, name: bytes, skipped: Skipped) -> None: ...
    def delete_skipped(self, name: bytes) -> None: ...


@dataclass(frozen=True)
class Recovery:
    """What `IndexStore.heal` did with a damaged index."""

    reason: str
    moved_to: str | None  # where the damaged copy went, if it was kept
    salvaged_vectors: int


class IndexStore(Protocol):
    """One agent's index in one backend."""

    backend: str  # "sqlite" | "postgres"
    # How the keyword index tokenizes text (recorded as `ftsTokenizer` in the index identity,
    # see `index.identity`): a different value means a full rebuild, never mixed keyword rows.
    fts_tokenizer: str
    # Where this store writes, as its search hits name it (`MeasuredChunk.namespace`); "" for a
    # backend without namespaces.
    namespace: str

    def location(self) -> str:
        """Where the index lives, fit to show (a path, or a URL without its password plus
        the namespace)."""
        ...

    def writer(self) -> StoreWriter:
        """The writer, opened on first use. Raises IndexLockedError if another process writes
        this index, IndexDamagedError if it is damaged."""
        ...

    def reader(self) -> StoreReader:
        """The calling thread's reader (opened on first use, reopened after a rebuild)."""
        ...

    def exists(self) -> bool:
        """Whether an index has been created (a search on a missing index builds it)."""
        ...

    def rebuild(self, build: Callable[[StoreWriter], T]) -> T:
        """Safe full rebuild: `build` fills a fresh, empty index (the embedding cache carried
        over) while readers keep the old one; the fresh one replaces it only if `build`
        returns. On any exception the old index is untouched."""
        ...

    def heal(self, reason: str) -> Recovery:
        """Replace a damaged index with an empty one, salvaging what it can (the embedding
        cache); the caller refills it from the Markdown."""
        ...

    def adopt(self) -> str:
        """Make the index this store's workspace's (`openmemd store adopt`): a PostgreSQL
        namespace filled from another workspace refuses this one's writer until then. Returns
        the workspace it was filled from ("" if none was recorded); BadRequestError where an
        index has no such owner (a SQLite file is its own state dir's)."""
        ...

    def damage(self) -> str:
        """Why the open index can no longer be trusted (deleted or replaced under us), or ""."""
        ...

    def vector_mode(self) -> VectorMode: ...

    def status(self) -> dict[str, Any]:
        """Backend facts for `status` (engine and extension versions, namespace, ...)."""
        ...

    def maintain(self) -> None:
        """Periodic upkeep (checkpoint, statistics); cheap when nothing changed."""
        ...

    def close(self) -> None: ...
