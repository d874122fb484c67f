"""Pieces of the fake OpenAI-compatible embedding server on loopback, shared by the provider
tests and the progress tests."""

from __future__ import annotations

import hashlib
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


def embeddings_payload(body: dict[str, Any]) -> dict[str, Any]:
    """The `POST /v1/embeddings` answer for a request body: one raw vector per input."""
    data = [{"object": "embedding", "index": i, "embedding": raw_vector(t)}
            for i, t in enumerate(body["input"])]
    return {"object": "list", "data": data, "model": body["model"]}


class JsonHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, silent, JSON in and out: what both fake servers speak."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def read_json(self) -> Any:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def reply(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        raw = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        self.send_response(code)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)
