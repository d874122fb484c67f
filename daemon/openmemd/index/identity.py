"""What an index was built with. Any difference means a full rebuild (never mixed vectors)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from openmemd.index.agent_sessions import AGENT_SOURCES
from openmemd.index.blocks import UNITS
from openmemd.index.redact import RULES as REDACTION_RULES

# Keys of the meta JSON that must match for an index to be reused. `vectorDims` is compared
# only when both sides know it (an OpenAI model's dims are learnt from its first reply).
_COMPARED = ("model", "provider", "providerKey", "sources", "scopeHash", "chunkTokens",
             "chunkOverlap", "chunkUnits", "ftsTokenizer", "tokenizer", "redaction")


def _sha256_json(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
                          ).hexdigest()


@dataclass(frozen=True)
class IndexIdentity:
    provider: str
    model: str
    provider_key: str
    dims: int | None
    sources: tuple[str, ...]
    extra_paths: tuple[str, ...]
    chunk_tokens: int
    chunk_overlap: int
    # The store's keyword tokenizer (`IndexStore.fts_tokenizer`): backend-specific, so the
    # store that holds the index names it.
    fts_tokenizer: str
    tokenizer: str = "cl100k_base"
    # How long-term files are cut (index/blocks.py): ours, not OpenClaw's, so its own key.
    chunk_units: str = UNITS

    @classmethod
    def fts_only(cls, **kw: Any) -> IndexIdentity:
        return cls(provider="none", model="fts-only",
                   provider_key=_sha256_json({"provider": "none", "model": "fts-only"}),
                   dims=None, **kw)

    def to_meta(self) -> dict[str, Any]:
        """OpenClaw's `memory_index_meta_v1` value (camelCase), plus our tokenizer."""
        meta: dict[str, Any] = {
            "model": self.model, "provider": self.provider, "providerKey": self.provider_key,
            "sources": sorted(self.sources),
            "scopeHash": _sha256_json({"extraPaths": sorted(self.extra_paths),
                                       "multimodal": {"enabled": False}}),
            "chunkTokens": self.chunk_tokens, "chunkOverlap": self.chunk_overlap,
            "chunkUnits": self.chunk_units,
            "ftsTokenizer": self.fts_tokenizer, "tokenizer": self.tokenizer,
        }
        # Transcripts indexed under older secret rules are re-rendered (rebuilt once), so a
        # secret those rules left in clear leaves the index too; no transcripts, no key.
        if {"sessions", *AGENT_SOURCES} & set(self.sources):
            meta["redaction"] = REDACTION_RULES
        if self.dims:
            meta["vectorDims"] = self.dims
        return meta


def differences(stored: dict[str, Any] | None, wanted: dict[str, Any]) -> list[str]:
    """Names of the identity fields that differ; ["meta"] when there is no stored identity."""
    if stored is None:
        return ["meta"]
    diffs = [k for k in _COMPARED if stored.get(k) != wanted.get(k)]
    if stored.get("vectorDims") and wanted.get("vectorDims") \
            and stored["vectorDims"] != wanted["vectorDims"]:
        diffs.append("vectorDims")
    return diffs
