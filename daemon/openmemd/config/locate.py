"""Where things are, known without building the settings: the config file and its TOML, the
state dir, an agent's workspace and index file, whether openclaw.json is a layer.

`loading` and `settings` use these functions for the same answers, so a command the daemon
answers (`cli/fast.py`, which reads only the keys that locate its index) and the full settings
cannot disagree. Light on purpose: os, pathlib and `paths`; the TOML parser only when there is
a config file.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from openmemd import paths
from openmemd.errors import ConfigError

DEFAULT_AGENT = "main"
SOURCES = ("memory", "sessions", "claude-code", "codex")  # the last two: agents/
# Dreaming's phases in run order (one [dreaming.<phase>] table each); "all" runs them all.
PHASES = ("light", "rem", "deep")
PHASE_CHOICES = (*PHASES, "all")
ENV_VARS = {"OPENMEMD_WORKSPACE": "workspace", "OPENMEMD_STATE_DIR": "state_dir",
            "OPENMEMD_ENDPOINT": "server.endpoint", "OPENMEMD_STORE_URL": "store.url",
            "OPENMEMD_DASHBOARD_PORT": "dashboard.port"}
OPENCLAW_CONFIG = "openclaw.json"


def toml_hint(path: Path) -> str:
    """Why a config file is not TOML, when it is OpenClaw's JSON5 file passed as --config."""
    if Path(path).suffix.lower() in (".json", ".json5"):
        return ("; this looks like OpenClaw's openclaw.json, which openmemd reads by itself "
                "(from $OPENCLAW_STATE_DIR or ~/.openclaw) under its own config.toml")
    return ""


def read_config(config_file: str | os.PathLike[str] | None, env: Mapping[str, str], *,
                wanted: re.Pattern[str] | None = None) -> tuple[Path, dict[str, Any] | None]:
    """The config file and its TOML (None when there is no file): `config_file`, else
    `$OPENMEMD_CONFIG`, else the platform config file if it exists. A file named but missing,
    unreadable or not TOML raises ConfigError. `wanted`: parse the file only if its text
    matches (else its TOML is taken as {}: it sets none of the keys the caller reads)."""
    explicit = config_file is not None or bool(env.get("OPENMEMD_CONFIG"))
    path = Path(config_file or env.get("OPENMEMD_CONFIG") or paths.config_file()).expanduser()
    if path.is_file():
        return path, _read_toml(path, wanted)
    if explicit:
        raise ConfigError(f"{path}: config file not found")
    return path, None


def _read_toml(path: Path, wanted: re.Pattern[str] | None) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}{toml_hint(path)}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    if wanted is not None and not wanted.search(text):
        return {}
    # imported here: with no config file, a command does not pay for the TOML parser
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}{toml_hint(path)}") from None


def expand_home(value: str, env: Mapping[str, str]) -> str:
    """`~` and `~/...` against `env`'s HOME (OpenClaw's paths)."""
    if value == "~" or value.startswith("~/"):
        return str(Path(env.get("HOME", "~")) / value[2:]) if env.get("HOME") else value
    return value


def openclaw_config(env: Mapping[str, str]) -> Path | None:
    """openclaw.json when it is a settings layer: `$OPENCLAW_STATE_DIR`, else `$HOME/.openclaw`,
    unless `$OPENMEMD_OPENCLAW` is off. None when `env` names neither directory or the file
    is not there."""
    if env.get("OPENMEMD_OPENCLAW", "").strip().lower() in ("0", "off", "false", "no"):
        return None
    root = openclaw_state_dir(env)
    path = root / OPENCLAW_CONFIG if root is not None else None
    return path if path is not None and path.is_file() else None


def openclaw_state_dir(env: Mapping[str, str]) -> Path | None:
    """`$OPENCLAW_STATE_DIR`, else `$HOME/.openclaw`; None when `env` names neither."""
    if env.get("OPENCLAW_STATE_DIR"):
        return Path(expand_home(env["OPENCLAW_STATE_DIR"], env))
    if env.get("HOME"):
        return Path(env["HOME"]) / ".openclaw"
    return None


def state_path(state_dir: str) -> Path:
    """The state dir a `state_dir` setting means (empty: the platform's)."""
    return Path(state_dir).expanduser() if state_dir else paths.state_dir()


def index_path(state: Path, agent_id: str) -> Path:
    """An agent's SQLite index in the state dir."""
    return state / "memory" / f"{agent_id}.sqlite"


def workspace_path(agent_id: str, own: str, default: str, config_file: str,
                   known: Sequence[str] = ()) -> Path:
    """An agent's workspace: its own `[agents.<id>] workspace`, else for the default agent the
    top-level `workspace`, else the platform's. An agent the config does not know raises
    ConfigError naming the `known` ones: a typo must not quietly create a new index."""
    if own:
        return Path(own).expanduser()
    if agent_id == DEFAULT_AGENT:
        return Path(default).expanduser() if default else paths.default_workspace()
    raise ConfigError(f"unknown agent {agent_id!r} (known agents: {', '.join(known)}): add "
                      f"[agents.{agent_id}] workspace = ... to "
                      f"{config_file or paths.config_file()}")


def valid_agent_id(agent_id: str) -> bool:
    return bool(agent_id) and all(c.isalnum() or c in "-_" for c in agent_id)


def config_signature(config_file: str) -> list[int]:
    """Which file, as it is now, `config_file` is ([device, inode, mtime ns, size, ctime ns];
    [] for no file): a daemon reports that of the file it loaded and checked, and a command it
    answers on the light path compares it with its own (`discovery.find`)."""
    if not config_file:
        return []
    try:
        st = os.stat(config_file)
    except OSError:
        return []
    return [st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size, st.st_ctime_ns]


class Located:
    """The settings a request to a running daemon needs, read from the config file, the
    environment and the flags the way `load_settings` layers them (file < env < flags), for
    `discovery` (which takes this or a `Settings`): the endpoint the user set, the state dir,
    each agent's workspace and SQLite index. No validation beyond these keys: a command the
    daemon does not answer loads the full settings, which check everything."""

    __slots__ = ("agents", "config_file", "endpoint", "state_dir", "workspace")

    def __init__(self, config_file: str, state_dir: str, endpoint: str, workspace: str,
                 agents: dict[str, str]) -> None:
        self.config_file = config_file
        self.state_dir = state_dir
        self.endpoint = endpoint
        self.workspace = workspace
        self.agents = agents  # id -> its own workspace ("" when it has none)

    def configured_endpoint(self) -> str:
        return self.endpoint

    def state_path(self) -> Path:
        return state_path(self.state_dir)

    def agent_ids(self) -> list[str]:
        return list(dict.fromkeys([DEFAULT_AGENT, *self.agents]))

    def workspace_for(self, agent_id: str = DEFAULT_AGENT) -> Path:
        return workspace_path(agent_id, self.agents.get(agent_id, ""), self.workspace,
                              self.config_file, self.agent_ids())

    def index_location(self, agent_id: str) -> str:
        return str(index_path(self.state_path(), agent_id).resolve())


# A line that may set a key `locate` reads: one of them (bare, quoted or dotted) or its table.
# A file with none is not parsed (the TOML parser is a tenth of a daemon-answered command's
# start-up); the full settings, which a command the daemon does not answer loads, check it.
_LOCATING = re.compile(r"""(?m)^[ \t]*(?:\[[ \t]*["']?(?:store|server|agents)\b"""
                       r"""|["']?(?:workspace|state_dir|store|server|agents)["']?[ \t]*[.=])""")


def locate(config_file: str | None, env: Mapping[str, str],
           overrides: Mapping[str, str | None]) -> Located | None:
    """`Located` for these flags, or None when only the full settings can tell: openclaw.json
    is a layer (it is validated as a whole before any of it is used), the index is on
    PostgreSQL, or a locating key is not what `load_settings` accepts (it says what is wrong)."""
    if openclaw_config(env) is not None:
        return None
    try:
        path, data = read_config(config_file, env, wanted=_LOCATING)
    except ConfigError:
        return None
    raw = data or {}
    store, server = raw.get("store", {}), raw.get("server", {})
    if not isinstance(store, dict) or not isinstance(server, dict) or env.get(
            "OPENMEMD_STORE_URL") or store.get("backend", "sqlite") != "sqlite" \
            or "url" in store:
        return None
    layered = {"workspace": raw.get("workspace", ""), "state_dir": raw.get("state_dir", ""),
               "server.endpoint": server.get("endpoint", "")}
    for var, key in ENV_VARS.items():
        if env.get(var) and key in layered:
            layered[key] = env[var]
    layered |= {key: value for key, value in overrides.items() if value is not None}
    agents = raw.get("agents", {})
    if not isinstance(agents, dict) or not all(
            valid_agent_id(a) and isinstance(t, dict) and isinstance(t.get("workspace", ""), str)
            for a, t in agents.items()) or not all(
            isinstance(layered.get(k), str) for k in ("workspace", "state_dir",
                                                       "server.endpoint")):
        return None
    return Located(str(path) if data is not None else "", layered["state_dir"],
                   layered["server.endpoint"], layered["workspace"],
                   {a: t.get("workspace", "") for a, t in agents.items()})
