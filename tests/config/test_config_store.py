"""The `[store]` table: defaults, validation with clear errors, OPENMEMD_STORE_URL, namespace
placeholders, and the one URL redaction every display goes through."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from openmemd.cli.config_cmd import effective
from openmemd.config import ConfigError, load_settings, redact_url


def load(tmp_path: Path, body: str, env: dict[str, str] | None = None):
    cfg = tmp_path / "c.toml"
    cfg.write_text(body, encoding="utf-8")
    return load_settings(cfg, env=env or {})


def test_defaults_are_sqlite_and_own_namespace(tmp_path: Path) -> None:
    s = load(tmp_path, "")
    assert s.store.backend == "sqlite" and s.store.url == ""
    own = f"{socket.gethostname()}/main"
    assert s.store.namespace_for("main") == own
    assert s.store.search_namespaces_for("main") == (own,)


def test_postgres_settings_and_placeholders(tmp_path: Path) -> None:
    s = load(tmp_path, '[store]\nbackend = "postgres"\nurl = "postgresql://u@db/x"\n'
             'namespace = "team/{agent}"\nsearch_namespaces = ["team/{agent}", "team/shared"]\n'
             "statement_timeout_ms = 2500\n")
    assert s.store.namespace_for("ops") == "team/ops"
    assert s.store.search_namespaces_for("ops") == ("team/ops", "team/shared")
    assert s.store.statement_timeout_ms == 2500


def test_url_from_the_environment(tmp_path: Path) -> None:
    s = load(tmp_path, '[store]\nbackend = "postgres"\n',
             env={"OPENMEMD_STORE_URL": "postgresql://u:pw@db/x"})
    assert s.store.url == "postgresql://u:pw@db/x"


@pytest.mark.parametrize(("body", "message"), [
    ('[store]\nbackend = "mysql"\n', "'store.backend' must be one of sqlite, postgres"),
    ('[store]\nbackend = "postgres"\nurl = "db.example.com"\n', "not a libpq connection"),
    ('[store]\nurl = "postgresql://u:hunter2@db/x"\n', "set backend = \"postgres\""),
    ('[store]\nnamespace = ""\n', "'store.namespace' must not be empty"),
    ('[store]\nnamespace = "a\\u0001b"\n', "control characters"),
    ('[store]\nnamespace = "{host}/x"\n', "only placeholders"),
    ('[store]\nsearch_namespaces = "team"\n', "must be a list of strings"),
    ('[store]\nstatement_timeout_ms = 5\n', "out of range"),
])
def test_bad_store_settings_are_clear_errors(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")) as err:
        load(tmp_path, body)
    assert "hunter2" not in str(err.value)


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://bob:s3cr%40t@h:5432/db?sslmode=require",
     "postgresql://bob:***@h:5432/db?sslmode=require"),
    ("postgres://bob@h/db?password=x&a=1", "postgres://bob@h/db?password=***&a=1"),
    ("host=h password='a b' dbname=d", "host=h password=*** dbname=d"),
    ("host=h password=abc", "host=h password=***"),
    ("postgresql://bob@h/db", "postgresql://bob@h/db"),
])
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_config_show_masks_the_password(tmp_path: Path) -> None:
    s = load(tmp_path, '[store]\nbackend = "postgres"\nurl = "postgresql://u:hunter2@db/x"\n')
    shown = effective(s, "main")["settings"]["store.url"]["value"]
    assert shown == "postgresql://u:***@db/x"


def test_one_namespace_for_several_agents_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws2"
    with pytest.raises(ConfigError, match=r"put \{agent\} in it"):
        load(tmp_path, f'[store]\nbackend = "postgres"\nnamespace = "team"\n'
                       f'[agents.ops]\nworkspace = "{ws}"\n')
