"""The `[store]` table's checks, and the one way a database URL is shown: without its password.

A libpq connection string comes in two forms -- a URL (`postgresql://user:secret@host/db?...`)
and key/value pairs (`host=h password=secret`) -- and either may carry a password. Logs,
`status`, error messages and service units only ever see `redact_url(url)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from openmemd.config.settings import Settings, StoreSettings
from openmemd.errors import ConfigError

MASK = "***"
_URL_USERINFO = re.compile(r"^(?P<scheme>postgres(?:ql)?://)(?P<user>[^:@/?#]*):(?P<pw>[^@/?#]*)@")
_URL_PARAM = re.compile(r"(?P<key>[?&]password=)(?P<pw>[^&#]*)", re.IGNORECASE)
_KV_PASSWORD = re.compile(r"(?P<key>\bpassword\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'|\S+)",
                          re.IGNORECASE)
URL_SCHEMES = ("postgresql://", "postgres://")
MAX_NAMESPACE = 200


def redact_url(url: str) -> str:
    """`url` with any password replaced by ***; a URL without one is returned unchanged."""
    if url.startswith(URL_SCHEMES):
        url = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", url)
        return _URL_PARAM.sub(lambda m: f"{m['key']}{MASK}", url)
    return _KV_PASSWORD.sub(lambda m: f"{m['key']}{MASK}", url)


def postgres_location(url: str, namespace: str) -> str:
    """A PostgreSQL index as `IndexStore.location()` names it: the server (no password) and
    the namespace."""
    shown = redact_url(url) if url else "(libpq defaults: PG* variables)"
    return f"{shown} (namespace {namespace})"


def index_location(settings: Settings, agent_id: str) -> str:
    """Which index the settings mean for `agent_id`, as its store's `location()` names it,
    known without opening it: what a daemon and a command compare to tell whether they mean
    the same index (a SQLite file by its real path; on PostgreSQL the server and the
    namespace, for there is no file)."""
    if settings.store.backend == "postgres":
        return postgres_location(settings.store.url, settings.store.namespace_for(agent_id))
    return str(settings.index_path(agent_id).resolve())


def url_password(url: str) -> str | None:
    """The password written in `url`, if any (to scrub it from driver messages)."""
    m = _URL_USERINFO.match(url) or _URL_PARAM.search(url) or _KV_PASSWORD.search(url)
    if m is None or not m["pw"]:
        return None
    pw = m["pw"]
    return pw[1:-1] if pw.startswith("'") and pw.endswith("'") else pw


def check_store(store: StoreSettings, source: Callable[[str], str], *,
                agents: Sequence[str] = ()) -> None:
    """Cross-field checks of `[store]`; raises ConfigError starting with `source(key)`: the
    key and where it was set."""
    url = store.url.strip()
    if url and not url.startswith(URL_SCHEMES) and "=" not in url:
        raise ConfigError(f"{source('store.url')} = {redact_url(url)!r} is not a libpq "
                          "connection string: use postgresql://user@host:5432/dbname or "
                          "'host=... dbname=...'")
    if url and store.backend != "postgres":
        raise ConfigError(f"{source('store.url')} is set but 'store.backend' is "
                          f"{store.backend!r}; set backend = \"postgres\" to use it")
    if store.backend == "postgres" and len(agents) > 1 and "{agent}" not in store.namespace:
        raise ConfigError(f"{source('store.namespace')} = {store.namespace!r} would be shared "
                          f"by the agents {', '.join(agents)} (one writer per namespace): "
                          "put {agent} in it")
    for key, template in [("store.namespace", store.namespace),
                          *(("store.search_namespaces", n) for n in store.search_namespaces)]:
        _check_namespace(key, template, source)


def _check_namespace(key: str, template: str, source: Callable[[str], str]) -> None:
    if not template.strip():
        raise ConfigError(f"{source(key)} must not be empty")
    if len(template) > MAX_NAMESPACE:
        raise ConfigError(f"{source(key)} is longer than {MAX_NAMESPACE} characters")
    if any(ord(c) < 32 or c == "\x7f" for c in template):
        raise ConfigError(f"{source(key)} = {template!r} contains control characters")
    rest = template.replace("{hostname}", "").replace("{agent}", "")
    if "{" in rest or "}" in rest:
        raise ConfigError(f"{source(key)} = {template!r}: the only placeholders are "
                          "{hostname} and {agent}")
