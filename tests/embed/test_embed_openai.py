"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from openai_fake import DIMS, EmbeddingServer, raw_vector
from openmemd.config import EmbeddingSettings
from openmemd.embed.base import EmbeddingError
from openmemd.embed.openai import (
    OpenAIProvider,
    estimate_tokens,
    plan_batches,
    resolve_api_key,
)
from openmemd.embed.pool import EmbeddingPool

KEY = "sk-test-0123456789"


def unit(text: str) -> np.ndarray:
    vec = np.asarray(raw_vector(text), dtype=np.float32)
    return vec / np.linalg.norm(vec)


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    srv = EmbeddingServer(api_key=KEY)
    yield srv
    srv.close()


def provider_for(srv: EmbeddingServer, **kwargs: Any) -> OpenAIProvider:
    options: dict[str, Any] = {"base_url": srv.url, "model": "test-embed", "api_key": KEY,
                               "backoff_start": 0.01, "timeout_seconds": 5.0}
    options.update(kwargs)
    return OpenAIProvider(**options)


def test_batches_under_the_token_budget_with_bearer_auth(server: EmbeddingServer) -> None:
    texts = [f"{i:02d} " + "x" * 97 for i in range(9)]  # 25 estimated tokens each
    texts.insert(4, "y" * 1000)  # 250 estimated tokens: over the budget, a batch of its own
    provider = provider_for(server, batch_max_tokens=64, max_inputs_per_request=8)
    vectors = provider.embed_documents(texts)

    assert vectors.shape == (10, DIMS) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, np.stack([unit(t) for t in texts]), atol=1e-6)
    sent = server.inputs()
    assert [t for batch in sent for t in batch] == texts  # every text once, in order
    assert ["y" * 1000] in sent
    assert max(len(b) for b in sent) == 2  # several inputs per request...
    for batch in sent:  # ...within the budget, unless a lone oversized input
        assert len(batch) == 1 or sum(estimate_tokens(t) for t in batch) <= 64
    assert all(r["auth"] == f"Bearer {KEY}" for r in server.requests)
    assert all(r["body"]["model"] == "test-embed" for r in server.requests)
    assert provider.dims == DIMS and len(server.requests) == len(sent)  # no probe needed


def test_dims_are_probed_lazily_and_queries_are_normalised(server: EmbeddingServer) -> None:
    provider = provider_for(server)
    assert provider.known_dims is None
    assert server.requests == []  # construction and known_dims stay offline
    assert provider.embed_documents([]).shape == (0, DIMS)  # learns dims with one probe
    assert server.inputs() == [["probe"]] and provider.known_dims == DIMS
    query = provider.embed_query("hello")
    assert query.shape == (DIMS,)
    np.testing.assert_allclose(query, unit("hello"), atol=1e-6)


def test_rate_limit_then_success_is_retried(server: EmbeddingServer) -> None:
    server.script = [("status", 429, {"error": {"message": "Rate limit reached"}}),
                     ("status", 503, "upstream busy")]
    vectors = provider_for(server).embed_documents(["a", "b"])
    np.testing.assert_allclose(vectors, np.stack([unit("a"), unit("b")]), atol=1e-6)
    assert server.inputs() == [["a", "b"]] * 3


def test_persistent_server_error_names_url_status_and_message(server: EmbeddingServer) -> None:
    server.script = [("status", 500, {"error": {"message": "model crashed"}})] * 10
    provider = provider_for(server, max_retries=3)
    with pytest.raises(EmbeddingError) as err:
        provider.embed_documents(["a"])
    message = str(err.value)
    assert f"{server.url}/embeddings" in message
    assert "HTTP 500" in message and "model crashed" in message and "4 attempts" in message
    assert len(server.requests) == 4
    assert KEY not in message


def test_client_errors_are_not_retried_and_never_show_the_key(server: EmbeddingServer) -> None:
    provider = provider_for(server, api_key="sk-wrong-key-42")
    with pytest.raises(EmbeddingError) as err:
        provider.embed_documents(["a"])
    message = str(err.value)
    assert "HTTP 401" in message and "Incorrect API key provided" in message
    assert "sk-wrong-key-42" not in message and "sk-wrong-key-42" not in repr(provider)
    assert len(server.requests) == 1

    server.script = [("status", 400, {"error": {"message": "input too long"}})]
    with pytest.raises(EmbeddingError, match="HTTP 400: input too long"):
        provider_for(server).embed_query("a")

    # A redirect is not followed: urllib would replay the Authorization header to its target.
    server.script = [("redirect", "http://127.0.0.1:9/elsewhere")]
    with pytest.raises(EmbeddingError, match="HTTP 307"):
        provider_for(server).embed_query("a")
    assert len(server.requests) == 3


def test_timeouts_and_dropped_connections_are_retried(server: EmbeddingServer) -> None:
    server.script = [("sleep", 1.5), ("drop",)]
    provider = provider_for(server, timeout_seconds=0.3)
    np.testing.assert_allclose(provider.embed_query("a"), unit("a"), atol=1e-6)
    assert server.inputs() == [["a"]] * 3

    server.script = [("sleep", 1.5)] * 3
    with pytest.raises(EmbeddingError, match=r"timed out after 0.3 s \(after 2 attempts\)"):
        provider_for(server, timeout_seconds=0.3, max_retries=1).embed_query("b")


def test_unreachable_server_and_bad_responses_fail_clearly(server: EmbeddingServer) -> None:
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dead = OpenAIProvider(base_url=f"http://127.0.0.1:{port}/v1", backoff_start=0.01)
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match=f"cannot reach http://127.0.0.1:{port}/v1/emb"):
        dead.embed_query("a")
    assert time.monotonic() - started < 2  # refused is not retried

    server.script = [("status", 200, {"data": []})]
    with pytest.raises(EmbeddingError, match="invalid embeddings response: no 'data'"):
        provider_for(server).embed_query("a")
    with pytest.raises(EmbeddingError, match="must be an http"):
        OpenAIProvider(base_url="127.0.0.1:8080")


def test_provider_key_follows_model_and_url_not_the_key() -> None:
    base = OpenAIProvider(base_url="http://127.0.0.1:1/v1", model="m1", api_key="k1")
    assert base.provider_key == OpenAIProvider(base_url="http://127.0.0.1:1/v1/", model="m1",
                                               api_key="other").provider_key
    assert base.provider_key != OpenAIProvider(base_url="http://127.0.0.1:1/v1",
                                               model="m2").provider_key
    assert base.provider_key != OpenAIProvider(base_url="http://127.0.0.1:2/v1",
                                               model="m1").provider_key
    default = OpenAIProvider()
    assert default.url == "https://api.openai.com/v1/embeddings"
    assert (default.model, default.max_input_tokens) == ("text-embedding-3-small", 8191)


def test_api_key_sources() -> None:
    env = {"MY_KEY": "from-my-env", "OPENAI_API_KEY": "from-openai-env"}
    local = "http://127.0.0.1:11434/v1"
    assert resolve_api_key(EmbeddingSettings(api_key="direct", api_key_env="MY_KEY"),
                           local, env) == "direct"
    assert resolve_api_key(EmbeddingSettings(api_key_env="MY_KEY"), local, env) == "from-my-env"
    # An OpenAI key in the environment goes to OpenAI only, never to another server.
    assert resolve_api_key(EmbeddingSettings(), local, env) == ""
    assert resolve_api_key(EmbeddingSettings(), "https://api.openai.com/v1", env) == \
        "from-openai-env"
    provider = OpenAIProvider.from_settings(
        EmbeddingSettings(provider="openai", base_url=local, api_key_env="MY_KEY",
                          timeout_seconds=7, max_retries=1), env=env)
    assert (provider.timeout_seconds, provider.max_retries) == (7, 1)


def test_plan_batches_respects_count_and_budget() -> None:
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("记忆" * 10) == 20  # about one token per CJK character
    assert plan_batches(["a"] * 5, max_tokens=100, max_inputs=2) == [[0, 1], [2, 3], [4]]
    assert plan_batches(["x" * 400, "a", "b"], max_tokens=50, max_inputs=10) == [[0], [1, 2]]
    assert plan_batches([], max_tokens=50, max_inputs=10) == []


def test_pool_blocks_submitters_while_full(server: EmbeddingServer) -> None:
    server.gate.clear()  # the server holds every answer until the gate opens
    provider = provider_for(server)
    with EmbeddingPool(provider, workers=2, batch_size=1, max_pending=2) as pool:
        first, second = pool.submit(["one"]), pool.submit(["two"])
        third: list[Any] = []
        blocked = threading.Thread(target=lambda: third.append(pool.submit(["three"])))
        blocked.start()
        blocked.join(0.3)
        assert blocked.is_alive() and not third  # back-pressure: no third batch in flight
        server.gate.set()
        blocked.join(10)
        results = [f.result(timeout=10) for f in (first, second, third[0])]
    for text, vectors in zip(["one", "two", "three"], results, strict=True):
        np.testing.assert_allclose(vectors[0], unit(text), atol=1e-6)
    assert sorted(b[0] for b in server.inputs()) == ["one", "three", "two"]

