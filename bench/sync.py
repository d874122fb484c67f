"""Sync speed: first index (files/s) and the no-op resync, beside a bare stat walk.

    python bench/sync.py ../shared/corpora/tldr-pages.tar.gz
    python bench/sync.py PATH --provider local --limit 500   # with the embedding model
    python bench/sync.py PATH --provider local --memory-md FILE   # FILE as the root MEMORY.md

CORPUS is a folder or a .tar.gz of Markdown files; it is unpacked into a temporary workspace
under memory/ (the corpus is never copied into the repository). Default provider is `none`
(keyword index only) so the figures measure scanning, chunking and SQLite; embedding speed is
measured by bench/embed.py. `--memory-md` puts a file at the workspace root as MEMORY.md, the
file the index cuts by Markdown block (index/blocks.py) rather than into windows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tarfile
import tempfile
import time
from pathlib import Path

from openmemd.api import MemoryIndex
from openmemd.config import load_settings


def unpack(corpus: Path, dest: Path, limit: int | None) -> int:
    count = 0
    if corpus.is_dir():
        for path in sorted(corpus.rglob("*.md")):
            if limit and count >= limit:
                break
            target = dest / path.relative_to(corpus)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            count += 1
        return count
    with tarfile.open(corpus) as tar:
        for member in tar:
            if not (member.isfile() and member.name.endswith(".md")):
                continue
            if limit and count >= limit:
                break
            target = dest / member.name
            if not target.resolve().is_relative_to(dest.resolve()):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(member)
            if src is not None:
                target.write_bytes(src.read())
                count += 1
    return count


def bare_walk(root: Path) -> int:
    """The floor: os.scandir + stat of every entry, nothing else."""
    n = 0
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for de in it:
                if de.is_dir(follow_symlinks=False):
                    stack.append(de.path)
                else:
                    de.stat(follow_symlinks=False)
                    n += 1
    return n


def timed_pair(first, second, repeat: int) -> tuple[float, float]:
    """Medians of `first` and `second`, run alternately so both see the same machine state."""
    runs: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for fn, out in ((first, runs[0]), (second, runs[1])):
            started = time.perf_counter()
            fn()
            out.append(time.perf_counter() - started)
    return statistics.median(runs[0]), statistics.median(runs[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="index at most N files")
    parser.add_argument("--provider", default="none", choices=("none", "local"))
    parser.add_argument("--repeat", type=int, default=5, help="runs of the no-op timings")
    parser.add_argument("--memory-md", type=Path, default=None,
                        help="copied to the workspace root as MEMORY.md")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="openmemd-bench-") as tmp:
        workspace = Path(tmp) / "workspace"
        (workspace / "memory").mkdir(parents=True)
        files = unpack(args.corpus, workspace / "memory", args.limit)
        if args.memory_md is not None:
            shutil.copyfile(args.memory_md, workspace / "MEMORY.md")
            files += 1
        config = Path(tmp) / "config.toml"
        config.write_text(f'[embedding]\nprovider = "{args.provider}"\n', encoding="utf-8")
        settings = load_settings(config, env={})
        with MemoryIndex.open(workspace, state_dir=Path(tmp) / "state", config=settings) as ix:
            started = time.perf_counter()
            report = ix.sync()
            first = time.perf_counter() - started
            noop, walk = timed_pair(ix.sync, lambda: bare_walk(workspace), args.repeat)
            status = ix.status()
        print(f"corpus: {args.corpus} ({files} Markdown files, provider {args.provider})")
        print(f"first index: {report.indexed} files, {report.chunks} chunks in {first:.2f} s "
              f"= {report.indexed / first:.0f} files/s, {report.chunks / first:.0f} chunks/s")
        if report.vectors_embedded:
            print(f"  vectors embedded: {report.vectors_embedded}")
        print(f"no-op resync (median of {args.repeat}, alternating): {noop * 1000:.1f} ms")
        print(f"bare os.scandir+stat walk (median of {args.repeat}, alternating): "
              f"{walk * 1000:.1f} ms")
        print(f"ratio no-op resync / bare walk: {noop / walk:.2f}x (goal <= 2x)")
        print(f"index: {status.files.indexed} files, {status.chunks} chunks")


if __name__ == "__main__":
    main()
