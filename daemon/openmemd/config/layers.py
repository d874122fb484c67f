"""The settings layers and what follows from them: openclaw.json < the config file < env <
flags, merged into the raw dict `config` validates; the settings of each OpenClaw agent; where
each value came from (`config show`); where an agent's transcripts are and who dreams there."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmemd.config.openclaw import LAYER, OpenClawLayer, load, merge_raw, set_raw


def merge_layers(layers: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for _name, raw in layers:
        out = merge_raw(out, raw)
    return out


def origins(layers: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    """Dotted openmemd key -> the layer its value came from (the last one that set it)."""
    out: dict[str, str] = {}

    def walk(raw: dict[str, Any], prefix: str, name: str) -> None:
        for key, value in raw.items():
            dotted = f"{prefix}{key}"
            if isinstance(value, dict) and key != "agents":
                walk(value, f"{dotted}.", name)
            elif key == "agents" and isinstance(value, dict):
                for agent_id, table in value.items():
                    if isinstance(table, dict):
                        walk(table, f"agents.{agent_id}.", name)
            else:
                out[dotted] = name

    for name, raw in layers:
        walk(raw, "", name)
    return out


@dataclass(frozen=True)
class Blame:
    """Names a setting where it was set, for an error message: the file (or the environment,
    or the command line) and the key as that place spells it -- OpenClaw's camelCase path in
    openclaw.json, the variable's name in the environment."""

    layers: Mapping[str, str]  # openmemd key -> the layer that set it (`origins`)
    names: Mapping[str, Mapping[str, str]]  # layer -> openmemd key -> the key as it spells it
    places: Mapping[str, str]  # layer -> how a message calls it (a file's path)
    default: str  # where a key that no layer set is blamed: the config file, or "defaults"

    def place(self, key: str) -> str:
        layer = self.layers.get(key)
        return self.default if layer is None else self.places.get(layer, layer)

    def name(self, key: str) -> str:
        return repr(self.names.get(self.layers.get(key, ""), {}).get(key, key))

    def __call__(self, key: str) -> str:
        """`<place>: '<key>'`, the start of an error message about `key`."""
        return f"{self.place(key)}: {self.name(key)}"

    def also(self, key: str, beside: str) -> str:
        """`key` named in a message about `beside`: its place too when that differs."""
        place = self.place(key)
        return self.name(key) + ("" if place == self.place(beside) else f" ({place})")


def blame(layers: list[tuple[str, dict[str, Any]]], default: str, oc: OpenClawLayer | None,
          oc_names: Mapping[str, str], env_vars: Mapping[str, str]) -> Blame:
    return Blame(origins(layers),
                 {LAYER: oc_names, "env": {key: var for var, key in env_vars.items()}},
                 {LAYER: oc.path if oc is not None else LAYER, "env": "environment",
                  "flag": "command line"}, default)


class Loaded:
    """How a `Settings` was built: its layers (for `config show`), the OpenClaw layer and the
    settings of each OpenClaw agent that has its own memorySearch."""

    def __init__(self, settings: Any, layers: tuple[tuple[str, dict[str, Any]], ...],
                 openclaw: OpenClawLayer | None) -> None:
        self.settings = settings
        self.layers = layers
        self.openclaw = openclaw
        self.agent_settings: dict[str, Any] = {}

    @classmethod
    def collect(cls, env: Mapping[str, str], file_layer: tuple[str, dict[str, Any]],
                env_vars: Mapping[str, str], overrides: Mapping[str, Any],
                build: Callable[[dict[str, Any], Blame], Any]) -> Loaded:
        """Merge openclaw.json < the config file < env < flags; `build` validates a raw dict
        (config.loading) and raises ValueError (ConfigError) naming the key where it was set."""
        import dataclasses

        env_raw: dict[str, Any] = {}
        flag_raw: dict[str, Any] = {}
        for var, key in env_vars.items():
            if env.get(var):
                set_raw(env_raw, key, env[var])
        for key, value in overrides.items():
            if value is not None:
                set_raw(flag_raw, key, value)
        oc = load(env)
        oc_raw: dict[str, Any] = {}
        if oc is not None and not oc.warning:
            try:  # validated alone: a bad value there is a warning, never a start-up error
                build(oc.raw, blame([(LAYER, oc.raw)], oc.path, oc, oc.names, {}))
                for agent_id, own in oc.agent_raw.items():
                    raw = merge_raw(oc.base, own)
                    build(raw, blame([(LAYER, raw)], oc.path, oc, _names(oc, agent_id), {}))
                oc_raw = oc.raw
            except ValueError as exc:
                oc = dataclasses.replace(oc, warning=f"{exc}; ignored")
        source = file_layer[0]
        layers = ((LAYER, oc_raw), file_layer, ("env", env_raw), ("flag", flag_raw))
        names = oc.names if oc is not None else {}
        loaded = cls(build(merge_layers(list(layers)),
                           blame(list(layers), source, oc, names, env_vars)), layers, oc)
        config_file = source if source != "defaults" else ""
        file_agents = file_layer[1].get("agents") or {}
        for agent_id in (oc.agent_raw if oc_raw and oc is not None else ()):
            if agent_id == "main" or agent_id in file_agents:  # config.toml's table wins
                continue
            assert oc is not None  # there are agents only when it is
            own_layers = [(LAYER, oc.agent_layer(agent_id)), *layers[1:]]
            checked = blame(own_layers, source, oc, _names(oc, agent_id), env_vars)
            loaded.agent_settings[agent_id] = dataclasses.replace(
                build(merge_layers(own_layers), checked), config_file=config_file, loaded=loaded)
        return loaded

    @property
    def warning(self) -> str:
        return self.openclaw.warning if self.openclaw is not None else ""

    @property
    def ignored(self) -> tuple[str, ...]:
        oc = self.openclaw
        return oc.ignored if oc is not None and not oc.warning else ()

    def usable(self) -> OpenClawLayer | None:
        oc = self.openclaw
        return oc if oc is not None and not oc.warning else None


def _names(oc: OpenClawLayer, agent_id: str) -> dict[str, str]:
    """OpenClaw's key of each setting of `oc.agent_layer(agent_id)`."""
    return {**oc.names, **oc.agent_names.get(agent_id, {})}


def _usable(settings: Any) -> OpenClawLayer | None:
    loaded = getattr(settings, "loaded", None)
    return loaded.usable() if loaded is not None else None


def config_files(settings: Any) -> list[str]:
    """The files whose settings are in effect, lowest first: openclaw.json, the config file."""
    oc = _usable(settings)
    return [p for p in (oc.path if oc is not None else "", settings.config_file) if p]


def sessions_dir(settings: Any, agent_id: str, workspace: Path) -> Path:
    """Where this agent's transcripts are: `sessions_dir` if set; OpenClaw's
    `<stateDir>/agents/<id>/sessions` when the workspace is that OpenClaw agent's; else
    `<workspace>/sessions`."""
    agent = settings.agents.get(agent_id)
    explicit = agent.sessions_dir if agent is not None else ""
    if not explicit and agent_id == "main":
        explicit = settings.sessions_dir
    if explicit:
        return Path(workspace) / Path(explicit).expanduser()  # an absolute path replaces it
    oc = _usable(settings)
    owner = oc.owns(workspace) if oc is not None else None
    if owner is not None and owner.id == agent_id:
        return Path(owner.sessions_dir)
    return Path(workspace) / "sessions"


def dreaming_left_to_openclaw(settings: Any, workspace: Path) -> bool:
    """OpenClaw's own dreaming is on and this is one of its workspaces: one dreamer only."""
    oc = _usable(settings)
    return oc is not None and oc.dreaming_enabled and oc.owns(workspace) is not None


def origins_for(loaded: Loaded | None, agent_id: str) -> dict[str, str]:
    """Where each setting of this agent came from (`config show`)."""
    if loaded is None:
        return {}
    layers = list(loaded.layers)
    oc = loaded.usable()
    if oc is not None and agent_id in loaded.agent_settings:
        layers[0] = (LAYER, oc.agent_layer(agent_id))
    return origins(layers)
