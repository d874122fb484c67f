"""Finding the files to index and reading them safely.

The walk never follows a symlink (file or directory), so everything it finds lies inside the
workspace; reads open component by component without following any link (`safeopen`), in
case a file or directory is swapped for a link between the walk and the read. Bad files (too
big, binary, not UTF-8, a name that is not UTF-8) are reported as issues, never raised: one
bad file must not stop a sync.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from openmemd.index import agent_sessions, transcripts
from openmemd.index.chunking import sha256_hex
from openmemd.index.safeopen import EscapeError, open_beneath

IGNORED_DIRS = frozenset({".git", "node_modules", ".pnpm-store", ".venv", "venv", ".tox",
                          "__pycache__", ".dreams"})
ROOT_MEMORY_FILES = ("MEMORY.md", "memory.md")


class FileEntry(NamedTuple):
    """One file found by the walk (a NamedTuple: cheap to build and compare with the stored
    `store.file_state.FileSignature`, which has the same shape).

    ctime and inode are change signals an editor cannot restore (`touch -r` puts the mtime
    back, but sets the ctime): a same-size edit with its mtime restored still differs here.
    """

    path: str  # workspace-relative, forward slashes: the `files.path` key
    source: str  # "memory" | "sessions"
    mtime_ms: int
    size: int
    ctime_ns: int = -1  # -1: not known (a row written before these were kept)
    ino: int = -1


@dataclass(frozen=True)
class ScanIssue:
    path: str
    reason: str


@dataclass(frozen=True)
class FileContent:
    text: str
    hash: str
    warning: str = ""


class SkipFile(Exception):
    """This file cannot be indexed; the message says why."""


@dataclass(frozen=True)
class ScanScope:
    """What to index in one workspace."""

    workspace: Path
    sources: tuple[str, ...] = ("memory",)
    extra_paths: tuple[str, ...] = ()
    max_file_bytes: int = 5 * 1024 * 1024
    sessions_dir: Path | None = None  # transcripts outside the workspace (OpenClaw's state dir)
    # other agents' session folders (source, folder): `index.agent_sessions`
    agent_roots: tuple[tuple[str, Path], ...] = ()

    def agent_root(self, source: str) -> Path | None:
        """The session folder of an agent source that is indexed (None: not indexed)."""
        if source not in self.sources:
            return None
        return next((Path(r) for s, r in self.agent_roots if s == source), None)

    def extra_roots(self) -> list[str]:
        """Extra paths as workspace-relative posix paths; ones outside the workspace dropped."""
        roots = []
        ws = os.path.abspath(self.workspace)
        for raw in self.extra_paths:
            raw = raw.strip()
            if not raw:
                continue
            full = os.path.abspath(os.path.join(ws, os.path.expanduser(raw)))
            rel = os.path.relpath(full, ws)
            if rel == "." or rel.startswith(".."):
                continue
            roots.append(Path(rel).as_posix())
        return sorted(set(roots))


def _entry(rel: str, source: str, st: os.stat_result) -> FileEntry:
    return FileEntry(rel, source, st.st_mtime_ns // 1_000_000, st.st_size, st.st_ctime_ns,
                     st.st_ino)


def display_path(rel: str) -> str:
    """`rel` as valid UTF-8 text: undecodable bytes of a file name (kept by Python as lone
    surrogates) become `\\xff` escapes, so reports, logs and replies can always encode it."""
    try:
        rel.encode("utf-8")
        return rel
    except UnicodeEncodeError:
        pass
    try:
        return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte (JSON "\ud800")
        return rel.encode("utf-8", "backslashreplace").decode("utf-8")


class WorkspaceScan(NamedTuple):
    """What a walk of the workspace found: the files to index, and the symlinked notes and
    folders it did not follow (each with why, for `index`, `status` and `doctor`)."""

    entries: list[FileEntry]
    links: list[ScanIssue]


def link_issue(workspace: Path, rel: str) -> ScanIssue:
    """Why the symlink `rel` is not indexed, naming where it leads."""
    real = os.path.realpath(workspace / rel)
    root = os.path.realpath(workspace)
    shown, target = display_path(rel), display_path(real)
    if os.path.commonpath([root, real]) != root:
        return ScanIssue(shown, f"a symlink to {target}, outside the workspace: not followed "
                         "(symlinks never are); move the notes into the workspace to index them")
    return ScanIssue(shown, f"a symlink to {target}: not followed (symlinks never are); the "
                     "target is indexed where it lies, if that is a memory path")


def _walk_md(root: Path, rel_root: str, found: dict[str, FileEntry],
             links: list[str]) -> None:
    """Add every `*.md` file under `root` to `found` (first one wins), and to `links` every
    symlink that would have been a note or a folder. Links are not followed: `is_file`/`is_dir`
    with follow_symlinks=False are false for them. This loop is most of a no-op sync, so it
    does as little as it can per entry."""
    stack = [(str(root), rel_root)]
    while stack:
        directory, rel_dir = stack.pop()
        try:
            it = os.scandir(directory)
        except OSError:
            continue
        with it:
            for de in it:
                name = de.name
                if name.endswith(".md") and de.is_file(follow_symlinks=False):
                    rel = f"{rel_dir}/{name}"
                    if rel in found:
                        continue
                    try:
                        st = de.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    found[rel] = FileEntry(rel, "memory", st.st_mtime_ns // 1_000_000,
                                           st.st_size, st.st_ctime_ns, st.st_ino)
                elif de.is_dir(follow_symlinks=False):
                    if name not in IGNORED_DIRS:
                        stack.append((de.path, f"{rel_dir}/{name}"))
                elif de.is_symlink() and (name.endswith(".md") or de.is_dir()):
                    links.append(f"{rel_dir}/{name}")


def _lstat_regular(path: Path) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def scan_workspace(scope: ScanScope) -> list[FileEntry]:
    """Every indexable file, deduplicated by path, in walk order. Cheap: stat only, no reads."""
    return walk_workspace(scope).entries


def walk_workspace(scope: ScanScope) -> WorkspaceScan:
    """`scan_workspace`'s files, and the symlinks among the memory paths it did not follow."""
    ws = scope.workspace
    found: dict[str, FileEntry] = {}
    links: list[str] = []
    if "memory" in scope.sources:
        for name in ROOT_MEMORY_FILES:
            if os.path.islink(ws / name):
                links.append(name)
            st = _lstat_regular(ws / name)
            if st is not None:
                found[name] = _entry(name, "memory", st)
        for rel_root in ["memory", *scope.extra_roots()]:
            full = ws / rel_root
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if _has_symlink_parent(ws, rel_root):
                continue
            if stat.S_ISLNK(st.st_mode):
                links.append(rel_root)
            elif stat.S_ISDIR(st.st_mode):
                _walk_md(full, rel_root, found, links)
            elif stat.S_ISREG(st.st_mode) and rel_root.endswith(".md"):
                found.setdefault(rel_root, _entry(rel_root, "memory", st))
    issues = [link_issue(ws, rel) for rel in dict.fromkeys(links)]
    if "sessions" in scope.sources:
        _scan_sessions(scope, found)
    for source, _ in scope.agent_roots:
        root = scope.agent_root(source)
        if root is not None and _is_real_dir(root):
            _walk_agent(root, source, found)
    return WorkspaceScan(list(found.values()), issues)


def _scan_sessions(scope: ScanScope, found: dict[str, FileEntry]) -> None:
    sessions = transcripts.root_of(scope.workspace, scope.sessions_dir)
    if not _is_real_dir(sessions):
        return
    try:
        it = os.scandir(sessions)
    except OSError:  # unreadable: like an unreadable memory folder, nothing to index
        return
    with it:
        for de in it:
            if transcripts.is_transcript_name(de.name) and de.is_file(follow_symlinks=False):
                try:
                    found[f"sessions/{de.name}"] = _entry(
                        f"sessions/{de.name}", "sessions", de.stat(follow_symlinks=False))
                except OSError:
                    continue


def _walk_agent(root: Path, source: str, found: dict[str, FileEntry]) -> None:
    """Every session file under an agent's folder, as `<source>/<rel>`; links not followed."""
    stack = [(str(root), source)]
    while stack:
        directory, rel_dir = stack.pop()
        try:
            it = os.scandir(directory)
        except OSError:
            continue
        with it:
            for de in it:
                if de.is_dir(follow_symlinks=False):
                    stack.append((de.path, f"{rel_dir}/{de.name}"))
                elif agent_sessions.is_session_name(de.name) and de.is_file(
                        follow_symlinks=False):
                    try:
                        found[f"{rel_dir}/{de.name}"] = _entry(
                            f"{rel_dir}/{de.name}", source, de.stat(follow_symlinks=False))
                    except OSError:
                        continue


def _is_real_dir(path: Path) -> bool:
    """A directory, and not a symlink to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _has_symlink_parent(workspace: Path, rel: str) -> bool:
    parts = Path(rel).parts[:-1]
    current = workspace
    for part in parts:
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return True
        except OSError:
            return True
    return False


def classify(scope: ScanScope, rel_path: str) -> str | None:
    """The source a workspace-relative path would be indexed under, or None if it is not."""
    rel = Path(rel_path).as_posix()
    if rel.startswith("../") or rel.startswith("/"):
        return None
    parts = rel.split("/")
    if any(p in IGNORED_DIRS for p in parts[:-1]):
        return None
    if "memory" in scope.sources:
        if rel in ROOT_MEMORY_FILES:
            return "memory"
        if rel.endswith(".md"):
            if parts[0] == "memory" and len(parts) > 1:
                return "memory"
            for root in scope.extra_roots():
                if rel == root or rel.startswith(root + "/"):
                    return "memory"
    if "sessions" in scope.sources and len(parts) == 2 and parts[0] == "sessions" \
            and transcripts.is_transcript_name(parts[1]):
        return "sessions"
    if len(parts) > 1 and scope.agent_root(parts[0]) is not None \
            and agent_sessions.is_session_name(parts[-1]) and ".." not in parts:
        return parts[0]
    return None


def stat_entry(scope: ScanScope, rel_path: str) -> FileEntry | None:
    """The entry for one path if it exists and is indexable (used by targeted syncs)."""
    source = classify(scope, rel_path)
    root, full = transcripts.locate(scope.workspace, scope.sessions_dir, rel_path,
                                    scope.agent_roots)
    if source is None or _has_symlink_parent(root, os.path.relpath(full, root)) \
            or (root != scope.workspace and not _is_real_dir(root)):
        return None
    st = _lstat_regular(full)
    return None if st is None else _entry(Path(rel_path).as_posix(), source, st)


# The rule of what is not a note, whoever reads it: the indexer (`read_content`) and the
# session's startup context both skip such a file and say why, in these words.
BINARY_PROBE_BYTES = 8192  # a NUL in a file's first 8 KiB makes it binary


def name_issue(rel: str) -> str | None:
    """Why a file named `rel` is not read as a note (None: it is read)."""
    if display_path(rel) != rel:
        return "file name is not valid UTF-8; rename the file to index it"
    return None


def binary_issue(head: bytes) -> str | None:
    """Why a note whose content starts with `head` is not read (None: it is read); `head`
    holds at least the first BINARY_PROBE_BYTES bytes of a file that long."""
    if b"\x00" in head[:BINARY_PROBE_BYTES]:
        return "binary file (contains NUL bytes)"
    return None


def read_content(scope: ScanScope, entry: FileEntry) -> FileContent:
    """Read and hash one file, refusing links, escapes, huge and binary files."""
    bad_name = name_issue(entry.path)
    if bad_name:
        raise SkipFile(bad_name)
    # Transcripts may live in OpenClaw's state dir: each is opened beneath its own root.
    root, full = transcripts.locate(scope.workspace, scope.sessions_dir, entry.path,
                                    scope.agent_roots)
    cap = scope.max_file_bytes
    if entry.source in agent_sessions.AGENT_SOURCES:
        cap = max(cap, agent_sessions.MAX_SESSION_BYTES)
    try:
        fd = open_beneath(root, full.relative_to(root).as_posix())
    except EscapeError:
        raise SkipFile("a symlink on the way; symlinks are not followed") from None
    except OSError as exc:
        raise SkipFile(f"cannot open: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise SkipFile("not a regular file")
        if st.st_size > cap:
            raise SkipFile(f"larger than the {cap}-byte cap ({st.st_size} bytes)")
        raw = fh.read(cap + 1)
    if len(raw) > cap:
        raise SkipFile(f"larger than the {cap}-byte cap")
    warning = ""
    binary = binary_issue(raw)
    if binary:
        if entry.source == "memory":
            raise SkipFile(binary)
        # A transcript is a line per record: a torn write or a preallocated block leaves NULs
        # in some lines, which are not JSON and are skipped as any bad line is; the rest counts.
        warning = "contains NUL bytes; the lines holding them are skipped"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", errors="replace")
        warning = warning or (f"not valid UTF-8 (byte {exc.start}); indexed with replacement "
                              "characters")
    if text.startswith("\ufeff"):
        text = text[1:]
    return FileContent(text, sha256_hex(text), warning)
