"""Incremental sync: make the index match the workspace, touching only what changed.

Two phases, so a first index never blocks search:
1. files → chunks and keyword rows, one store transaction per file (vectors found in the
   embedding cache are written in the same transaction);
2. chunks still waiting for a vector are embedded in batches through the worker pool and
   written as they complete (index/vector_fill.py, a `VectorFill` each indexer holds).
   Interrupting phase 2 loses nothing already embedded.

`IndexSync` decides what a sync writes and writes it through the store's `StoreWriter`; it
does not serialise itself: its one caller, `api.maintainer.Maintainer`, runs one write at a
time.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from openmemd.index import tiktoken_offline
from openmemd.index.agent_sessions import AppendReader
from openmemd.index.blocks import chunk_blocks, is_long_term
from openmemd.index.chunking import Chunk, chunk_ids, chunk_text
from openmemd.index.report import FTS_ONLY_MODEL, Progress, SyncReport, VectorTarget
from openmemd.index.scan import (
    FileContent,
    FileEntry,
    ScanIssue,
    ScanScope,
    SkipFile,
    read_content,
    stat_entry,
    walk_workspace,
)
from openmemd.index.sessions import render_session
from openmemd.index.skips import SkipMemo, is_per_file
from openmemd.index.vector_fill import VectorFill, in_transaction
from openmemd.log import get_logger
from openmemd.store.base import ChunkRow, FileSignature, StoreWriter
from openmemd.text.tokens import fts_index_text

if TYPE_CHECKING:
    import tiktoken

log = get_logger(__name__)

# Re-exported: callers import what a sync reports from here.
__all__ = ["FTS_ONLY_MODEL", "IndexSync", "Progress", "SyncReport", "VectorTarget"]


class IndexSync:
    def __init__(self, writer: StoreWriter, scope: ScanScope, *, chunk_tokens: int,
                 chunk_overlap: int, vectors: VectorTarget | None,
                 embed_derived: bool = True) -> None:
        self.writer = writer
        self.scope = scope
        self.chunk_tokens = chunk_tokens
        self.chunk_overlap = chunk_overlap
        # phase 2, on the same writer
        self.vector_fill = VectorFill(writer, vectors, derived=embed_derived)
        self.model = self.vector_fill.model
        self._encoding: tiktoken.Encoding | None = None  # see _tokenizer
        self._skips = SkipMemo(writer)
        self._agents = AppendReader()  # where each agent session file was last read to

    # -- phase 1 -------------------------------------------------------------------------------
    def sync(self, *, force: bool = False, progress: Progress | None = None) -> SyncReport:
        started = time.monotonic()
        report = SyncReport()
        scan = walk_workspace(self.scope)
        entries = scan.entries
        report.links = scan.links  # not followed: named on every sync, as skipped files are
        report.scanned = len(entries)
        stored = self.writer.load_signatures()
        self._skips.load()
        present = {e.path for e in entries}
        for path in stored.keys() - present:
            self._delete(path)
            report.deleted += 1
        for path in self._skips.paths() - present:
            in_transaction(self.writer, partial(self._skips.clear, path))
        # Same path, source, mtime, size, ctime and inode: unchanged, not even read. A stored
        # row (FileSignature) and a walked entry (FileEntry) are NamedTuples of the same shape,
        # compared as plain tuples: no conversion on this path, which runs for every file.
        as_tuples: Mapping[str, tuple[object, ...]] = stored
        changed = entries if force else [e for e in entries if as_tuples.get(e.path) != e]
        report.unchanged = len(entries) - len(changed)
        for done, entry in enumerate(changed, start=1):
            self._sync_entry(entry, stored.get(entry.path), force, report)
            if progress is not None:
                progress("files", done, len(changed))
        report.seconds = time.monotonic() - started
        return report

    def sync_paths(self, rel_paths: Iterable[str]) -> SyncReport:
        """Upsert or delete exactly these workspace-relative paths."""
        started = time.monotonic()
        report = SyncReport()
        stored = self.writer.load_signatures()
        self._skips.load()
        for rel in sorted(set(rel_paths)):
            entry = stat_entry(self.scope, rel)
            if entry is None:
                if rel in stored:
                    self._delete(rel)
                    report.deleted += 1
                if rel in self._skips.paths():
                    in_transaction(self.writer, partial(self._skips.clear, rel))
                continue
            report.scanned += 1
            self._sync_entry(entry, stored.get(rel), False, report)
        report.seconds = time.monotonic() - started
        return report

    def _sync_entry(self, entry: FileEntry, row: FileSignature | None, force: bool,
                    report: SyncReport) -> None:
        stored_row: tuple[object, ...] | None = row  # compared as tuples, see sync()
        if not force and stored_row == entry:
            report.unchanged += 1
            return
        known = None if force else self._skips.known(entry)
        if known is not None:
            report.skipped.append(known)  # logged when it was found
            return
        self._tokenizer()  # outside the `try`: a missing tokenizer is no reason to skip a file
        try:
            self._index_entry(entry, row, force, report)
        except SkipFile as exc:
            self._skip(entry, row, str(exc), report)
        except Exception as exc:
            if not is_per_file(exc):
                raise
            # Whatever one file triggers that no check foresaw: that file only is skipped.
            self._skip(entry, row, f"{type(exc).__name__}: {exc}", report)

    def _skip(self, entry: FileEntry, row: FileSignature | None, reason: str,
              report: SyncReport) -> None:
        def write() -> None:
            if row is not None:  # its old rows no longer describe the file
                self.writer.delete_file(entry.path)
            report.skipped.append(self._skips.add(entry, reason))

        in_transaction(self.writer, write)
        if row is not None:
            report.deleted += 1

    def _index_entry(self, entry: FileEntry, row: FileSignature | None, force: bool,
                     report: SyncReport) -> None:
        content, line_map = self._read(entry)
        if content.warning:
            log.warning("file indexed with a warning", path=entry.path, reason=content.warning,
                        in_reply=True)
            report.warnings.append(ScanIssue(entry.path, content.warning))
        if not force and row is not None and row.source == entry.source \
                and self.writer.file_hash(entry.path) == content.hash:
            def touch() -> None:
                self.writer.touch_file(entry.path, entry.mtime_ms, entry.size, entry.ctime_ns,
                                       entry.ino)
                self._skips.clear(entry.path)  # no longer skipped

            in_transaction(self.writer, touch)
            report.unchanged += 1
            return
        chunks = self._chunk(entry, content, line_map)
        report.chunks += self._replace_file(entry, content.hash, chunks, report)
        report.indexed += 1

    def _read(self, entry: FileEntry) -> tuple[FileContent, Sequence[int] | None]:
        """The text to index and, for transcripts, the JSONL line of each rendered line."""
        root = self.scope.agent_root(entry.source)
        if root is not None:  # another agent's session file: read on from where we stopped
            try:
                session, warning = self._agents.read(root, entry.source, entry.path)
            except OSError as exc:
                raise SkipFile(f"cannot read: {exc.strerror or exc}") from None
            return FileContent(session.text, session.hash, warning), session.line_map
        content = read_content(self.scope, entry)
        if entry.source != "sessions":
            return content, None
        rendered = render_session(content.text)
        return FileContent(rendered.text, rendered.hash, content.warning), rendered.line_map

    def _tokenizer(self) -> tiktoken.Encoding:
        # Loaded for the first file to chunk: it costs ~0.2 s of CPU, which a sync finding
        # nothing changed (an in-process search's catch-up) never needs.
        if self._encoding is None:
            self._encoding = tiktoken_offline.get_encoding()
        return self._encoding

    def _chunk(self, entry: FileEntry, content: FileContent, line_map: Sequence[int] | None
               ) -> list[Chunk]:
        encoding = self._tokenizer()
        if is_long_term(entry.path, entry.source):  # one fact, one chunk (index/blocks.py)
            return chunk_blocks(content.text, tokens=self.chunk_tokens,
                                overlap=self.chunk_overlap, encode=encoding.encode_ordinary,
                                decode_bytes=encoding.decode_bytes)
        return chunk_text(content.text, tokens=self.chunk_tokens, overlap=self.chunk_overlap,
                          encode=encoding.encode_ordinary, decode_bytes=encoding.decode_bytes,
                          line_numbers=line_map)

    def _replace_file(self, entry: FileEntry, file_hash: str, chunks: list[Chunk],
                      report: SyncReport) -> int:
        now_ms = int(time.time() * 1000)
        cached = self.vector_fill.cached({c.hash for c in chunks})
        rows = []
        ids = chunk_ids(entry.source, entry.path, chunks, self.model)
        for c, cid in zip(chunks, ids, strict=True):
            rows.append(ChunkRow(
                id=cid, path=entry.path, source=entry.source, start_line=c.start_line,
                end_line=c.end_line, hash=c.hash, model=self.model, text=c.text,
                fts_text=fts_index_text(c.text), vector=cached.get(c.hash), updated_at=now_ms))

        def write() -> None:
            self.writer.replace_chunks(entry.path, rows)
            self.writer.upsert_file(entry.path, entry.source, file_hash, entry.mtime_ms,
                                    entry.size, entry.ctime_ns, entry.ino)
            self._skips.clear(entry.path)  # no longer skipped

        in_transaction(self.writer, write)
        report.vectors_from_cache += sum(1 for r in rows if r.hash in cached)
        return len(rows)

    def _delete(self, path: str) -> None:
        self._agents.forget(path)
        in_transaction(self.writer, lambda: self.writer.delete_file(path))
