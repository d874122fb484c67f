"""Pieces of the fake OpenAI-compatible embedding server on loopback, shared by the provider
tests and the progress tests."""

from __future__ import annotations

import hashlib
from http.server import ThreadingHTTPServer
from typing import Any

DIMS = 8


def raw_vector(text: str) -> list[float]:
    """What the server answers for `text`: deterministic and deliberately not unit length."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [(b - 127.5) / 10 for b in digest[:DIMS]]


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that time out close early: expected here, not worth a traceback
