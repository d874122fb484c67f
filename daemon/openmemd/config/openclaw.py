"""OpenClaw's `openclaw.json` (JSON5), a settings layer: defaults < it < config.toml < env < flags.

This module only turns the file into the raw dict shape config.toml produces (so `config/`
validates both the same way) plus what only OpenClaw knows: its agents' workspaces and
transcript folders, and whether its own dreaming is on. It never fails: an unreadable or
ill-typed file gives one warning and an empty layer; a field openmemd has no equivalent for
is listed in `ignored`. Locations come from the `env` mapping handed to `load_settings`, so a
test (or `env={}`) never sees the real ~/.openclaw.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from openmemd.config.locate import OPENCLAW_CONFIG, expand_home, openclaw_config
from openmemd.config.openclaw_budgets import startup_budgets

LAYER = CONFIG_NAME = OPENCLAW_CONFIG  # the file, and the settings layer it makes
OLLAMA_BASE_URL, OLLAMA_MODEL = "http://127.0.0.1:11434", "nomic-embed-text"
# OpenClaw's own openclaw.json is a few KB. The cap keeps a runaway file (json5 parses ~11 s
# per MB) from stalling every command that loads settings, while leaving room for 50x that.
MAX_BYTES = 256 * 1024

# memorySearch key (dotted, OpenClaw's camelCase) -> openmemd key (dotted, TOML shape).
_SIMPLE = {
    "chunking.tokens": "chunking.tokens", "chunking.overlap": "chunking.overlap",
    "query.maxResults": "query.max_results", "query.minScore": "query.min_score",
    "query.hybrid.enabled": "query.hybrid.enabled",
    "query.hybrid.vectorWeight": "query.hybrid.vector_weight",
    "query.hybrid.textWeight": "query.hybrid.text_weight",
    "query.hybrid.candidateMultiplier": "query.hybrid.candidate_multiplier",
    "query.hybrid.mmr.enabled": "query.mmr.enabled", "query.hybrid.mmr.lambda": "query.mmr.lambda",
    "query.hybrid.temporalDecay.enabled": "query.temporal_decay.enabled",
    "query.hybrid.temporalDecay.halfLifeDays": "query.temporal_decay.half_life_days",
    "cache.enabled": "cache.enabled", "cache.maxEntries": "cache.max_entries",
    "sync.watch": "sync.watch", "sync.watchDebounceMs": "sync.watch_debounce_ms",
    "sync.sessions.deltaBytes": "sync.session_delta_bytes",
    "sync.sessions.deltaMessages": "sync.session_delta_messages",
    "model": "embedding.model",
}
# Handled below by hand (not copied one to one).
_HANDLED = {"enabled", "sources", "extraPaths", "experimental.sessionMemory", "provider",
            "remote.baseUrl", "remote.apiKey"}
_DREAM_PHASES = {
    "light": {"enabled": "enabled", "lookbackDays": "lookback_days", "limit": "limit",
              "dedupeSimilarity": "dedupe_similarity"},
    "rem": {"enabled": "enabled", "lookbackDays": "lookback_days", "limit": "limit",
            "minPatternStrength": "min_pattern_strength"},
    "deep": {"enabled": "enabled", "limit": "limit", "minScore": "min_score",
             "minRecallCount": "min_recall_count", "minUniqueQueries": "min_unique_queries",
             "recencyHalfLifeDays": "recency_half_life_days", "maxAgeDays": "max_age_days",
             "maxPromotedSnippetTokens": "max_promoted_snippet_tokens"},
}


class LayerError(ValueError):
    """openclaw.json cannot be used; the message is the one-line warning."""


@dataclass(frozen=True)
class OpenClawAgent:
    """One OpenClaw agent as openmemd serves it (`id` is openmemd's: the default agent is
    "main" whatever OpenClaw calls it, `openclaw_id`)."""

    id: str
    openclaw_id: str
    workspace: str
    sessions_dir: str


@dataclass(frozen=True)
class OpenClawLayer:
    path: str = ""
    state_dir: str = ""
    # openmemd TOML shape, defaults + default agent
    raw: dict[str, Any] = field(default_factory=dict)
    base: dict[str, Any] = field(default_factory=dict)  # agents.defaults alone (under every agent)
    agent_raw: dict[str, Any] = field(default_factory=dict)  # id -> the raw of that agent alone
    agents: tuple[OpenClawAgent, ...] = ()
    names: dict[str, str] = field(default_factory=dict)  # openmemd key -> OpenClaw's, of raw
    agent_names: dict[str, dict[str, str]] = field(default_factory=dict)  # ... of agent_raw
    dreaming_enabled: bool = False
    ignored: tuple[str, ...] = ()
    warning: str = ""

    def agent_layer(self, agent_id: str) -> dict[str, Any]:
        """The raw settings of a non-default agent: the defaults, its own memorySearch, and
        every agent's workspace (so the agent's settings still know them all)."""
        top: dict[str, Any] = {k: self.raw[k] for k in ("workspace", "agents") if k in self.raw}
        return merge_raw(merge_raw(self.base, self.agent_raw.get(agent_id, {})), top)

    def agent(self, agent_id: str) -> OpenClawAgent | None:
        return next((a for a in self.agents if a.id == agent_id), None)

    def owns(self, workspace: str | os.PathLike[str]) -> OpenClawAgent | None:
        """The OpenClaw agent whose workspace this is (realpath compared), if any."""
        real = os.path.realpath(os.path.expanduser(workspace))
        return next((a for a in self.agents if os.path.realpath(a.workspace) == real), None)


def load(env: Mapping[str, str]) -> OpenClawLayer | None:
    """The layer, None when there is no openclaw.json (nothing changes for such a user) or
    `$OPENMEMD_OPENCLAW` is off."""
    path = openclaw_config(env)  # the same test `config.locate` makes
    if path is None:
        return None
    root = path.parent
    try:
        data = _read(path)
        if not isinstance(data, dict):
            raise LayerError("the top level is not an object")
        _check_text(data)
        return _layer(data, path, root, env)
    except LayerError as exc:
        why = str(exc)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        why = f"not valid JSON5 ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    except OSError as exc:
        why = f"cannot read ({exc.strerror})"
    return OpenClawLayer(path=str(path), warning=f"{path}: {why}; ignored")


def _read(path: Path) -> Any:
    with open(path, "rb") as f:
        data = f.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise LayerError(f"{os.fstat(f.fileno()).st_size} bytes, over the {MAX_BYTES >> 10}"
                             " KiB openmemd reads (OpenClaw's own is a few KB)")
    text = data.decode("utf-8")
    try:  # plain JSON first: the stdlib parses it in milliseconds, json5 ~11 s per MB
        return json.loads(text)
    except json.JSONDecodeError:
        import json5  # comments, unquoted keys, trailing commas

        return json5.loads(text)


def _check_text(value: Any, where: str = "") -> None:
    """Every string must be text: JSON lets an escape write a lone surrogate ("\\ud800"),
    which no path, URL, header or log line can carry."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            shown = where.encode("utf-8", "backslashreplace").decode("utf-8")
            raise LayerError(f"'{shown}' is not text: it holds the lone surrogate "
                             f"{value[exc.start]!r}") from None
    items = (value.items() if isinstance(value, dict)
             else enumerate(value) if isinstance(value, list) else ())
    for key, item in items:
        at = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else key
        _check_text(key, at)
        _check_text(item, at)


def _obj(data: Any, where: str) -> dict[str, Any]:
    if data is not None and not isinstance(data, dict):
        raise LayerError(f"'{where}' must be an object")
    return data or {}


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise LayerError(f"'{where}' must be a string")
    return value


def _leaves(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value and key != "headers":
            out.update(_leaves(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def set_raw(raw: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = raw
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


@dataclass
class _Mapped:
    """One memorySearch object mapped: openmemd's raw settings, and in `names` OpenClaw's key
    of each (`at`'s for the keys in `own`, else the defaults')."""

    raw: dict[str, Any]
    names: dict[str, str]
    at: str
    own: Mapping[str, Any] | None

    def where(self, key: str) -> str:
        at = self.at if self.own is None or key in self.own else "agents.defaults"
        return f"{at}.memorySearch.{key}"

    def put(self, ours: str, value: Any, key: str) -> None:
        set_raw(self.raw, ours, value)
        self.names[ours] = self.where(key)


def _memory_search(ms: dict[str, Any], ignored: list[str], names: dict[str, str],
                   at: str = "agents.defaults", own: Mapping[str, Any] | None = None
                   ) -> tuple[dict[str, Any], list[str] | None]:
    """openmemd raw settings for one memorySearch object, and its extraPaths (None = unset);
    `names` gets OpenClaw's key of each: `at`'s for the keys in `own`, else the defaults'."""
    mapped = _Mapped({}, names, at, own)
    leaves = _leaves(ms)
    _copy_simple(leaves, mapped, ignored)
    _map_sources(leaves, mapped)
    extra = _extra_paths(leaves, mapped)
    _map_provider(leaves, mapped, ignored)
    if "enabled" in leaves and not isinstance(leaves["enabled"], bool):
        raise LayerError(f"'{mapped.where('enabled')}' must be true or false")
    return mapped.raw, extra


def _copy_simple(leaves: dict[str, Any], mapped: _Mapped, ignored: list[str]) -> None:
    """The keys copied one to one (_SIMPLE); a key neither copied nor handled is ignored."""
    for key, value in leaves.items():
        if key in _SIMPLE:
            if isinstance(value, (dict, list)) or value is None:
                raise LayerError(f"'{mapped.where(key)}' must be a number or boolean")
            mapped.put(_SIMPLE[key], value, key)
        elif key not in _HANDLED:
            ignored.append(f"memorySearch.{key}")


def _map_sources(leaves: dict[str, Any], mapped: _Mapped) -> None:
    if "sources" not in leaves and "experimental.sessionMemory" not in leaves:
        return
    sources = leaves.get("sources", ["memory"])
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise LayerError(f"'{mapped.where('sources')}' must be a list of strings")
    # OpenClaw drops "sessions" unless experimental.sessionMemory is on; empty = memory.
    keep = [s for s in sources if s == "memory"
            or (s == "sessions" and leaves.get("experimental.sessionMemory") is True)]
    mapped.put("sources", keep or ["memory"], "sources")


def _extra_paths(leaves: dict[str, Any], mapped: _Mapped) -> list[str] | None:
    if "extraPaths" not in leaves:
        return None
    extra = leaves["extraPaths"]
    if not isinstance(extra, list) or not all(isinstance(p, str) for p in extra):
        raise LayerError(f"'{mapped.where('extraPaths')}' must be a list of strings")
    mapped.names["extra_paths"] = mapped.where("extraPaths")
    return extra


def _map_provider(leaves: dict[str, Any], mapped: _Mapped, ignored: list[str]) -> None:
    provider = leaves.get("provider")
    if provider is None:
        return
    provider = _str(provider, mapped.where("provider"))
    base = _str(leaves.get("remote.baseUrl", ""), mapped.where("remote.baseUrl"))
    if provider in ("openai", "ollama"):
        if provider == "ollama":
            base = (base or OLLAMA_BASE_URL).rstrip("/")
            base = base if base.endswith("/v1") else base + "/v1"  # its OpenAI-style API
            if "model" not in leaves:
                mapped.put("embedding.model", OLLAMA_MODEL, "provider")
        mapped.put("embedding.provider", "openai", "provider")
        if base:
            mapped.put("embedding.base_url", base, "remote.baseUrl")
        api_key = leaves.get("remote.apiKey")
        if api_key:
            mapped.put("embedding.api_key", _str(api_key, mapped.where("remote.apiKey")),
                       "remote.apiKey")
    elif provider == "local":
        mapped.put("embedding.provider", "local", "provider")
    elif provider != "auto":
        ignored.append(f"memorySearch.provider={provider}")


def merge_raw(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_raw(out[key], value)
        else:
            out[key] = value
    return out


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(p.strip() for p in items if p.strip()))


@dataclass(frozen=True)
class _Fallback:
    """What each agents.list entry falls back on: agents.defaults, and where OpenClaw puts an
    agent's workspace and transcripts."""

    memory_search: dict[str, Any]
    extra: list[str] | None  # agents.defaults.memorySearch.extraPaths
    default_id: str  # OpenClaw's id of the default agent
    workspace: str | None  # agents.defaults.workspace, home expanded
    home: Path
    root: Path
    env: Mapping[str, str]


class _Served(NamedTuple):
    """One agent openmemd serves: its own raw settings, their OpenClaw names, and the OpenClaw
    key its workspace comes from."""

    agent: OpenClawAgent
    raw: dict[str, Any]
    names: dict[str, str]
    workspace_key: str


def _layer(data: dict[str, Any], path: Path, root: Path, env: Mapping[str, str]) -> OpenClawLayer:
    ignored: list[str] = []
    agents_cfg = _obj(data.get("agents"), "agents")
    defaults = _obj(agents_cfg.get("defaults"), "agents.defaults")
    defaults_ms = _obj(defaults.get("memorySearch"), "agents.defaults.memorySearch")
    names: dict[str, str] = {}  # openmemd key -> OpenClaw's
    base, base_extra = _memory_search(defaults_ms, ignored, names)
    _map_memory(data, base, ignored, names)
    base = merge_raw(base, {**_dreaming(data, ignored, names), **startup_budgets(defaults, names)})
    home = Path(env["HOME"]) if env.get("HOME") else root.parent
    default_ws = defaults.get("workspace")
    if default_ws is not None:
        default_ws = expand_home(_str(default_ws, "agents.defaults.workspace"), env)
    entries, default_id, shift = _agent_entries(agents_cfg)
    fallback = _Fallback(defaults_ms, base_extra, default_id, default_ws, home, root, env)
    served = [s for i, e in enumerate(entries, -shift)
              if (s := _serve(e, f"agents.list[{i}]", fallback, ignored)) is not None]
    agent_raw = {s.agent.id: s.raw for s in served}
    agent_names = {s.agent.id: s.names for s in served}
    top: dict[str, Any] = {}
    for s in served:
        if s.agent.id == "main":
            top["workspace"] = s.agent.workspace
            names["workspace"] = s.workspace_key
        else:
            top.setdefault("agents", {})[s.agent.id] = {"workspace": s.agent.workspace}
            names[f"agents.{s.agent.id}.workspace"] = s.workspace_key
    if base_extra and "main" not in agent_raw:
        base["extra_paths"] = _dedupe(base_extra)
    raw = merge_raw(base, merge_raw(agent_raw.get("main", {}), top))
    return OpenClawLayer(str(path), str(root), raw, base, agent_raw,
                         tuple(s.agent for s in served),
                         {**names, **agent_names.get("main", {})}, agent_names,
                         _dreaming_enabled(data), tuple(dict.fromkeys(ignored)))


def _map_memory(data: dict[str, Any], base: dict[str, Any], ignored: list[str],
                names: dict[str, str]) -> None:
    """OpenClaw's `memory` object: its citations mode; a backend other than the builtin one is
    not openmemd's to follow."""
    citations = _obj(data.get("memory"), "memory").get("citations")
    if citations is not None:
        if citations not in ("auto", "on", "off"):
            raise LayerError("'memory.citations' must be auto, on or off")
        base["citations"] = citations
        names["citations"] = "memory.citations"
    if _obj(data.get("memory"), "memory").get("backend", "builtin") != "builtin":
        ignored.append("memory.backend")


def _agent_entries(agents_cfg: dict[str, Any]) -> tuple[list[dict[str, Any]], str, int]:
    """agents.list checked, with an entry for the default agent first when the list has none;
    the default agent's OpenClaw id; and the shift (1 when that entry was added, so the others
    keep their index in the file)."""
    entries = agents_cfg.get("list") or []
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise LayerError("'agents.list' must be a list of objects")
    for i, e in enumerate(entries):
        if not isinstance(e.get("id"), str) or not e["id"] \
                or not all(c.isalnum() or c in "-_" for c in e["id"]):
            raise LayerError(f"'agents.list[{i}].id' must be letters, digits, - or _")
    default_id = next((e["id"] for e in entries if e.get("default") is True),
                      entries[0]["id"] if entries else "main")
    if not any(e["id"] == default_id for e in entries):
        return [{"id": default_id}, *entries], default_id, 1
    return entries, default_id, 0


def _serve(e: dict[str, Any], at: str, fallback: _Fallback, ignored: list[str]
           ) -> _Served | None:
    """The agents.list entry `e` (at `at`) as openmemd serves it, None when it does not."""
    oc_id = e["id"]
    ms = _obj(e.get("memorySearch"), f"{at}.memorySearch")
    # Field-wise over the defaults first, as OpenClaw does (so `sources` in an agent still
    # sees the defaults' experimental.sessionMemory), then mapped.
    merged = merge_raw(fallback.memory_search, ms)
    own_names: dict[str, str] = {}
    own, own_extra = _memory_search(merged, ignored, own_names, at, _leaves(ms))
    if merged.get("enabled", True) is False:
        ignored.append(f"agent {oc_id} (memorySearch.enabled = false)")
        return None
    extra = _dedupe((fallback.extra or []) + (own_extra or [] if "extraPaths" in ms else []))
    if extra:
        own["extra_paths"] = extra
    ws, ws_key = _workspace(e, at, fallback)
    our_id = "main" if oc_id == fallback.default_id else oc_id
    if our_id == "main" and oc_id != fallback.default_id:
        return None  # a non-default OpenClaw agent called "main": openmemd's main is the default
    if our_id != "main" and not Path(ws).is_dir():
        ignored.append(f"agent {oc_id} (its workspace {ws} does not exist yet)")
        return None  # OpenClaw creates it on first use; until then there is nothing to serve
    sessions = str(fallback.root / "agents" / oc_id / "sessions")
    return _Served(OpenClawAgent(our_id, oc_id, ws, sessions), own, own_names, ws_key)


def _workspace(e: dict[str, Any], at: str, fallback: _Fallback) -> tuple[str, str]:
    """The entry's workspace, and the OpenClaw key it comes from."""
    oc_id = e["id"]
    if isinstance(e.get("workspace"), str):
        return expand_home(e["workspace"], fallback.env), f"{at}.workspace"
    if oc_id == fallback.default_id:
        ws = fallback.workspace or str(fallback.home / ".openclaw" / "workspace")
    else:
        ws = (str(Path(fallback.workspace) / oc_id) if fallback.workspace
              else str(fallback.home / ".openclaw" / f"workspace-{oc_id}"))
    return ws, "agents.defaults.workspace"


def _plugin_dreaming(data: dict[str, Any]) -> dict[str, Any]:
    plugins = _obj(data.get("plugins"), "plugins")
    entry = _obj(_obj(plugins.get("entries"), "plugins.entries").get("memory-core"),
                 "plugins.entries.memory-core")
    config = _obj(entry.get("config"), "plugins.entries.memory-core.config")
    return _obj(config.get("dreaming"), "plugins.entries.memory-core.config.dreaming")


def _dreaming_enabled(data: dict[str, Any]) -> bool:
    value = _plugin_dreaming(data).get("enabled", False)
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _dreaming(data: dict[str, Any], ignored: list[str], names: dict[str, str]
              ) -> dict[str, Any]:
    """OpenClaw's dreaming gates and schedule (used when openmemd dreams, e.g. `dream`)."""
    cfg = _plugin_dreaming(data)
    at = "plugins.entries.memory-core.config.dreaming"
    raw: dict[str, Any] = {}
    for key in ("frequency", "timezone"):
        if key in cfg:
            raw[key] = _str(cfg[key], f"{at}.{key}")
            names[f"dreaming.{key}"] = f"{at}.{key}"
    phases = _obj(cfg.get("phases"), f"{at}.phases")
    for phase, keys in _DREAM_PHASES.items():
        for key, value in _obj(phases.get(phase), f"{at}.phases.{phase}").items():
            if key in keys and not isinstance(value, (dict, list)):
                raw.setdefault(phase, {})[keys[key]] = value
                names[f"dreaming.{phase}.{keys[key]}"] = f"{at}.phases.{phase}.{key}"
            else:
                ignored.append(f"dreaming.phases.{phase}.{key}")
    for key in cfg:
        if key not in ("enabled", "frequency", "timezone", "phases"):
            ignored.append(f"dreaming.{key}")
    return {"dreaming": raw} if raw else {}
