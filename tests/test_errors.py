"""Every expected failure is an `OpenmemdError` carrying its protocol code: a bad setting is
`bad_request` (exit 2 in the CLI), a provider outage `unavailable`, never `internal`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zmq

from openmemd.cli import main
from openmemd.config import ConfigError
from openmemd.embed.base import EmbeddingError, ProviderDown, ProviderUnavailable
from openmemd.errors import OpenmemdError
from openmemd.protocol.requests import ERROR_CODES, ProtocolError, Request
from openmemd.server.zmq_server import ZmqServer


@pytest.mark.parametrize(("error", "code"), [
    (ConfigError("x.toml: unknown setting 'nope'"), "bad_request"),
    (EmbeddingError("http://127.0.0.1:9/v1 did not answer"), "unavailable"),
    (ProviderUnavailable("pip install onnxruntime"), "unavailable"),
    (ProviderDown("the index was not rebuilt"), "unavailable"),
    (ProtocolError("not_found", "no such agent"), "not_found"),
])
def test_each_error_is_an_openmemd_error_with_its_code(error: Exception, code: str) -> None:
    assert isinstance(error, OpenmemdError)
    assert error.code == code and code in ERROR_CODES


def test_a_config_error_is_still_a_value_error() -> None:
    # the settings layers report a bad value of any layer through ValueError
    assert issubclass(ConfigError, ValueError)


def test_a_provider_outage_is_unavailable_on_the_socket(sockdir: Path) -> None:
    def handler(req: Request) -> dict:
        raise EmbeddingError("embedding request to http://127.0.0.1:9/v1 failed: "
                             "connection refused")

    srv = ZmqServer(f"ipc://{sockdir}/e.sock", handler, workers=1, max_message_bytes=4096)
    srv.start()
    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 5000)
    try:
        sock.connect(srv.endpoint.url)
        sock.send(json.dumps({"op": "search", "query": "tea"}).encode())
        reply = json.loads(sock.recv())
    finally:
        sock.close()
        srv.stop(timeout=3)
    assert reply["ok"] is False
    assert reply["error"]["code"] == "unavailable"
    assert "connection refused" in reply["error"]["message"]


def test_a_config_error_exits_2_with_one_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[query]\nmax_results = 0\n", encoding="utf-8")
    assert main(["status", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("openmemd: config error:") and "max_results" in err
    assert "Traceback" not in err
