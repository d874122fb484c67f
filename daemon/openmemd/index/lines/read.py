"""Reading lines of a memory file for agents (`get`), inside strict bounds.

Only MEMORY.md, memory.md, DREAMS.md, `memory/**/*.md`, configured extra paths (`.md` only)
and indexed session transcripts (`sessions/<name>.jsonl`, read as the message lines the index
holds: `lines.transcript`) are served. The path may be a citation as search prints it
(`lines.cited`). A path that leaves the workspace, or passes through a symlink anywhere on the
way, is refused; "not found" and "forbidden" are distinct errors. The checks name the error;
the open itself (`safeopen.open_beneath`) is what keeps a link swapped in after them out.
A range starting past the end of the file is an error naming how many lines it has.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from openmemd.errors import BadRequestError, ForbiddenError, NotFoundError
from openmemd.index.lines.cited import parse_citation, past_end
from openmemd.index.lines.transcript import read_transcript
from openmemd.index.redact import redact
from openmemd.index.safeopen import EscapeError, open_beneath
from openmemd.index.scan import ScanScope, classify, display_path

READABLE_ROOT_FILES = ("MEMORY.md", "memory.md", "DREAMS.md")
# OpenClaw's dreaming copies transcript messages here, masked by its own narrower rules: served
# masked as transcripts are (line by line, so line numbers hold). Notes are served as written.
SESSION_CORPUS = "memory/.dreams/session-corpus/"


def _as_served(rel: str, text: str) -> str:
    if not rel.startswith(SESSION_CORPUS):
        return text
    return "\n".join(redact(line) for line in text.split("\n"))


def _relative(scope: ScanScope, path: str) -> str:
    """`path` checked and made workspace-relative (posix); refused if it leaves the workspace."""
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise BadRequestError("path must be a non-empty string")
    if display_path(path) != path:  # a lone surrogate: no file name on disk can match it
        raise BadRequestError("path must be valid UTF-8 text")
    ws = os.path.abspath(scope.workspace)
    full = os.path.abspath(os.path.join(ws, os.path.expanduser(path.strip())))
    rel = os.path.relpath(full, ws)
    if rel == "." or rel.startswith(".."):
        raise ForbiddenError(f"{path}: outside the workspace")
    return Path(rel).as_posix()


def resolve_readable(scope: ScanScope, path: str) -> tuple[str, Path]:
    """Validate `path` and return (workspace-relative path, absolute path)."""
    rel_posix = _relative(scope, path)
    ws = os.path.abspath(scope.workspace)
    if not rel_posix.endswith(".md"):
        raise ForbiddenError(f"{path}: only Markdown (.md) memory files and indexed session "
                             "transcripts (sessions/*.jsonl) can be read")
    allowed = (rel_posix in READABLE_ROOT_FILES or rel_posix.startswith("memory/")
               or any(rel_posix == r or rel_posix.startswith(r + "/")
                      for r in scope.extra_roots()))
    if not allowed:
        raise ForbiddenError(f"{path}: not a memory file (MEMORY.md, memory/**/*.md, DREAMS.md "
                             "or an extra path)")
    current = Path(ws)
    for part in Path(rel_posix).parts:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            raise NotFoundError(f"{rel_posix}: no such file") from None
        except OSError as exc:
            raise ForbiddenError(f"{rel_posix}: {exc.strerror}") from None
        if stat.S_ISLNK(st.st_mode):
            raise ForbiddenError(f"{rel_posix}: symlinks are not followed")
    if not stat.S_ISREG(st.st_mode):
        raise NotFoundError(f"{rel_posix}: not a regular file")
    return rel_posix, current


def read_lines(scope: ScanScope, path: str, from_line: int | None = None,
               lines: int | None = None) -> dict[str, Any]:
    if from_line is not None and (isinstance(from_line, bool) or not isinstance(from_line, int)
                                  or from_line < 1):
        raise BadRequestError("from must be a whole number ≥ 1")
    if lines is not None and (isinstance(lines, bool) or not isinstance(lines, int) or lines < 1):
        raise BadRequestError("lines must be a whole number ≥ 1")
    if isinstance(path, str):
        cited = parse_citation(path, from_line, lines)
        path, from_line, lines = cited.path, cited.from_line, cited.lines
    if classify(scope, _relative(scope, path)) not in (None, "memory"):  # transcript lines
        return read_transcript(scope, _relative(scope, path), from_line, lines)
    rel, _ = resolve_readable(scope, path)
    start = from_line or 1
    ranged = from_line is not None or lines is not None
    try:
        fd = open_beneath(scope.workspace, rel)
    except EscapeError:
        raise ForbiddenError(f"{rel}: symlinks are not followed") from None
    except FileNotFoundError:
        raise NotFoundError(f"{rel}: no such file") from None
    except OSError as exc:
        raise ForbiddenError(f"{rel}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):  # swapped since the checks above
            raise NotFoundError(f"{rel}: not a regular file")
        size = st.st_size
        if size > scope.max_file_bytes and not ranged:
            raise BadRequestError(f"{rel} is {size} bytes, over the {scope.max_file_bytes}-byte "
                                  "cap: ask for a range with from/lines")
        if not ranged:
            text = fh.read().decode("utf-8", errors="replace")
            all_lines = text.split("\n")
            total = len(all_lines) - (1 if text.endswith("\n") else 0)
            return {"path": rel, "text": _as_served(rel, text), "from": 1, "lines": total,
                    "totalLines": total}
        wanted: list[str] = []
        budget = scope.max_file_bytes
        total = 0
        for number, raw in enumerate(fh, start=1):
            total = number
            if number < start or (lines is not None and number >= start + lines):
                continue
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            budget -= len(raw)
            if budget < 0:
                raise BadRequestError(f"the requested range of {rel} is over the "
                                      f"{scope.max_file_bytes}-byte cap; ask for fewer lines")
            wanted.append(line)
    past_end(rel, start, total)
    return {"path": rel, "text": _as_served(rel, "\n".join(wanted)), "from": start,
            "lines": len(wanted), "totalLines": total}

