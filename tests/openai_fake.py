"""The fake OpenAI-compatible embedding server on loopback and its pieces, shared by the
provider tests, the provider-outage tests and the progress tests."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
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


class EmbeddingServer:
    """OpenAI embeddings protocol with scripted failures.

    `script` holds one action per incoming request (then normal answers): ("status", code,
    body), ("redirect", url), ("sleep", seconds) before answering, or ("drop",) to close the
    connection unanswered.
    """

    def __init__(self, api_key: str = "", port: int = 0) -> None:
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.script: list[tuple[Any, ...]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.lock = threading.Lock()
        server = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                body = self.read_json()
                with server.lock:
                    server.requests.append({"path": self.path, "body": body,
                                            "auth": self.headers.get("Authorization")})
                    action = server.script.pop(0) if server.script else ("ok",)
                server.gate.wait(10)
                if action[0] == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if action[0] == "sleep":
                    time.sleep(action[1])
                if action[0] == "status":
                    return self.reply(action[1], action[2])
                if action[0] == "redirect":
                    return self.reply(307, {}, {"Location": action[1]})
                if self.path != "/v1/embeddings":
                    return self.reply(404, {"error": {"message": "unknown route"}})
                if server.api_key and self.headers.get("Authorization") != \
                        f"Bearer {server.api_key}":
                    sent = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                    return self.reply(401, {"error": {
                        "message": f"Incorrect API key provided: {sent}"}})
                payload = embeddings_payload(body)
                payload["data"].reverse()  # any order is valid
                self.reply(200, payload)

        self.httpd = QuietServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def inputs(self) -> list[list[str]]:
        return [r["body"]["input"] for r in self.requests]

    def close(self) -> None:
        self.gate.set()
        self.httpd.shutdown()
        self.httpd.server_close()
