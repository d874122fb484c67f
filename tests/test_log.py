"""Log lines: a failure's traceback is there, and no secret a frame held ever is."""

from __future__ import annotations

import json

from helpers import logged
from openmemd.config import EmbeddingSettings, StoreSettings
from openmemd.log import get_logger
from openmemd.store.postgres.connect import PgConnectSpec

PASSWORD = "s3cr3t-pw"
URL = f"postgresql://alice:{PASSWORD}@db.example:5432/memory"


def _fails_holding_secrets(target: PgConnectSpec, store: StoreSettings,
                           embedding: EmbeddingSettings) -> None:
    note_text = f"the vault code is {PASSWORD}"  # a note being indexed, say
    raise RuntimeError(f"indexing failed ({len(note_text)} characters)")


def _log_the_failure(fmt: str) -> str:
    with logged(fmt) as out:
        try:
            _fails_holding_secrets(PgConnectSpec(URL, 1000),
                                   StoreSettings(backend="postgres", url=URL),
                                   EmbeddingSettings(api_key=PASSWORD))
        except RuntimeError:
            get_logger("openmemd.test").exception("index_failed")
    return out.getvalue()


def test_a_logged_traceback_shows_where_but_no_local_values() -> None:
    (line,) = _log_the_failure("json").splitlines()
    event = json.loads(line)
    (exc,) = event["exception"]
    assert exc["exc_value"] == "indexing failed (27 characters)"
    assert [f["name"] for f in exc["frames"]][-1] == "_fails_holding_secrets"
    assert PASSWORD not in line and "locals" not in exc["frames"][-1]


def test_reprs_never_show_a_password_or_key() -> None:
    # Whatever prints these (an error message, a debugger, a traceback renderer that shows
    # locals) shows where, not the secret.
    shown = [repr(PgConnectSpec(URL, 1000)), repr(StoreSettings(backend="postgres", url=URL)),
             repr(EmbeddingSettings(api_key=PASSWORD))]
    assert all(PASSWORD not in r for r in shown), shown
    assert "postgresql://alice:***@db.example:5432/memory" in shown[0]


def test_the_console_format_prints_a_plain_traceback() -> None:
    text = _log_the_failure("console")
    assert "index_failed" in text and "Traceback (most recent call last)" in text
    assert "RuntimeError: indexing failed (27 characters)" in text and PASSWORD not in text
