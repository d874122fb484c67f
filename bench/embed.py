"""Embedding throughput of each installed local model.

    python bench/embed.py [--corpus PATH] [--limit N] [--batches 1,8,32] [--models NAME,...]
    python bench/embed.py --corpus PATH --pipeline FILES [--models NAME]

With `--pipeline FILES`, the first FILES documents of the corpus are indexed through the whole
pipeline (scan, chunk, SQLite, embedding pool, cache writes) and its embedding throughput is
printed next to the raw embedder's on the very same chunk texts, at the pool's batch size
(goal: pipeline >= 0.9x raw, i.e. chunking and SQLite are not the bottleneck).

Prints texts/s at each batch size for short texts (~250 characters, like queries and small
notes) and chunk-sized texts (~1,500 characters, about one 400-token chunk). Texts come from
`--corpus` (a folder or a .tar.gz of Markdown files, read without extracting) or, without it,
from generated English prose. Figures, not asserts: the machine's load changes them.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import tarfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from openmemd.embed.base import EmbeddingError, EmbeddingProvider
from openmemd.embed.local import E5Provider, load_local_model
from openmemd.embed.models import LOCAL_MODELS
from openmemd.embed.registry import is_installed

SIZES = {"short": 250, "chunk": 1500}

_WORDS = " ".join([
    "memory note agent meeting project deadline review search index vector keyword daemon",
    "file workspace summary decision user prefers coffee morning release test bug fix deploy",
    "server config token model embed recall dream promote weekly plan the a of to and in for",
    "with on at by from is was will be has"]).split()


def read_corpus(path: Path) -> Iterator[str]:
    """Markdown documents from a folder or a .tar.gz / .tgz archive, in name order."""
    if path.is_dir():
        for file in sorted(path.rglob("*.md")):
            yield file.read_text(encoding="utf-8", errors="replace")
        return
    with tarfile.open(path, "r:*") as tar:
        for member in tar:  # streaming: members are read in archive order, nothing extracted
            if member.isfile() and member.name.endswith(".md"):
                handle = tar.extractfile(member)
                if handle is not None:
                    yield handle.read().decode("utf-8", errors="replace")


def synthetic_docs(seed: int = 7) -> Iterator[str]:
    rng = random.Random(seed)
    while True:
        sentences = (" ".join(rng.choices(_WORDS, k=rng.randint(6, 16))).capitalize() + "."
                     for _ in range(40))
        yield "\n".join(sentences)


def make_texts(docs: Iterable[str], size: int, count: int) -> list[str]:
    """`count` texts of about `size` characters, cut at line ends from the documents' lines."""
    texts: list[str] = []
    piece: list[str] = []
    length = 0
    for doc in docs:
        for line in doc.splitlines():
            line = line.strip()
            if not line:
                continue
            piece.append(line)
            length += len(line) + 1
            if length >= size:
                texts.append("\n".join(piece)[: int(size * 1.1)])
                piece, length = [], 0
                if len(texts) == count:
                    return texts
    return texts


def throughput(provider: EmbeddingProvider, texts: list[str], batch: int) -> float:
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        provider.embed_documents(texts[i:i + batch])
    return len(texts) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="folder or .tar.gz of .md files")
    parser.add_argument("--limit", type=int, default=48, help="texts per size (default 48)")
    parser.add_argument("--batches", default="1,8,32", help="batch sizes (default 1,8,32)")
    parser.add_argument("--models", default="", help="comma-separated; default: all installed")
    parser.add_argument("--pipeline", type=int, default=0, metavar="FILES",
                        help="index FILES corpus documents through the whole pipeline")
    args = parser.parse_args(argv)
    if args.pipeline:
        if not args.corpus:
            parser.error("--pipeline needs --corpus")
        return pipeline(args.corpus, args.pipeline, (args.models or "").split(",")[0])
    batches = [int(b) for b in args.batches.split(",")]
    wanted = [m for m in args.models.split(",") if m] or [m.name for m in LOCAL_MODELS]

    source = str(args.corpus) if args.corpus else "generated English prose"
    texts: dict[str, list[str]] = {}
    for name, size in SIZES.items():
        docs = read_corpus(args.corpus) if args.corpus else synthetic_docs()
        texts[name] = make_texts(docs, size, args.limit)
        if not texts[name]:
            print(f"no {name} texts found in {source}", file=sys.stderr)
            return 1
    print(f"texts: {source}; " + "; ".join(
        f"{n}: {len(t)} x ~{sum(map(len, t)) // len(t)} chars" for n, t in texts.items()))

    print(f"{'model':24} {'texts':6} {'batch':>5} {'texts/s':>9}")
    for info in LOCAL_MODELS:
        if info.name not in wanted:
            continue
        if not is_installed(info):
            print(f"{info.name:24} not installed ({info.package})")
            continue
        try:
            started = time.perf_counter()
            provider = load_local_model(info.name)
            load_s = time.perf_counter() - started
        except EmbeddingError as exc:
            print(f"{info.name:24} unavailable: {exc}")
            continue
        provider.embed_documents(texts["short"][:2])  # warm-up: page in the weights
        for (name, items), batch in itertools.product(texts.items(), batches):
            rate = throughput(provider, items, batch)
            print(f"{info.name:24} {name:6} {batch:5d} {rate:9.1f}", flush=True)
        notes = [f"load {load_s:.2f} s incl. sha256 check"]
        if isinstance(provider, E5Provider):
            over = sum(provider.token_count(t) > provider.max_input_tokens
                       for t in texts["chunk"])
            notes.append(f"{over}/{len(texts['chunk'])} chunk texts over the "
                         f"{provider.max_input_tokens}-token window")
        print(f"{'':24} ({'; '.join(notes)})")
    return 0


def pipeline(corpus: Path, files: int, model: str) -> int:
    import tempfile

    from openmemd.api import MemoryIndex
    from openmemd.config import load_settings
    from openmemd.store.sqlite import db

    with tempfile.TemporaryDirectory(prefix="openmemd-embed-bench-") as tmp:
        workspace = Path(tmp) / "workspace"
        (workspace / "memory").mkdir(parents=True)
        for i, text in enumerate(itertools.islice(read_corpus(corpus), files)):
            (workspace / "memory" / f"doc-{i:05d}.md").write_text(text, encoding="utf-8")
        config = Path(tmp) / "config.toml"
        config.write_text(f'[embedding]\nprovider = "local"\nmodel = "{model}"\n',
                          encoding="utf-8")
        settings = load_settings(config, env={})
        batch = settings.embedding.batch_size or 4  # the local providers' choice
        # The texts the pipeline will embed: index once keyword-only to read its chunks.
        with MemoryIndex.open(workspace, state_dir=Path(tmp) / "probe", config=settings) as ix:
            ix.sync(fill_vectors=False)
            conn, _ = db.connect(ix.db_path)
            texts = [r[0] for r in conn.execute("SELECT text FROM chunks ORDER BY rowid")]
            conn.close()
            provider = ix.provider
        provider.embed_documents(texts[:batch])  # warm-up: weights paged in, threads started
        started = time.perf_counter()
        for i in range(0, len(texts), batch):
            provider.embed_documents(texts[i:i + batch])
        raw = time.perf_counter() - started
        with MemoryIndex.open(workspace, state_dir=Path(tmp) / "state", config=settings) as ix:
            started = time.perf_counter()
            keyword = ix.sync(fill_vectors=False)
            phase1 = time.perf_counter() - started
            started = time.perf_counter()
            filled = ix.fill_vectors()
            phase2 = time.perf_counter() - started
    total = phase1 + phase2
    print(f"pipeline: {files} docs from {corpus}, model {provider.model}, batch {batch}")
    print(f"  keyword phase: {keyword.indexed} files, {keyword.chunks} chunks in {phase1:.2f} s")
    print(f"  vector phase: {filled.vectors_embedded} chunks in {phase2:.2f} s = "
          f"{filled.vectors_embedded / phase2:.2f} chunks/s")
    print(f"  whole first index: {keyword.chunks / total:.2f} chunks/s")
    print(f"  raw embedder, same {len(texts)} texts: {raw:.2f} s = {len(texts) / raw:.2f} texts/s")
    print(f"  pipeline / raw: {(keyword.chunks / total) / (len(texts) / raw):.2f}x (goal >= 0.9x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
