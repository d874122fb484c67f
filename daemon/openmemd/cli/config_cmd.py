"""`openmemd config show [--json]`: the effective settings and where each came from
(default, openclaw.json, config.toml, env or flag), API keys and the store URL's password
masked."""

from __future__ import annotations

import argparse
import dataclasses
import json
import typing
from typing import Any

from openmemd import paths
from openmemd.config import DEFAULT_AGENT, Settings, redact_url
from openmemd.config.layers import (
    config_files,
    dreaming_left_to_openclaw,
    origins_for,
    sessions_dir,
)
from openmemd.protocol.status import ConnectedAgent

MASK = "********"


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        if f.metadata.get("internal"):
            continue
        key = "lambda" if f.name == "lambda_" else f.name
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(hints[f.name]):
            out.update(_flatten(value, f"{prefix}{key}."))
        elif f.name == "agents":
            for agent_id, agent in value.items():
                out.update(_flatten(agent, f"agents.{agent_id}."))
        elif f"{prefix}{key}" == "store.url":
            out["store.url"] = redact_url(value)  # a libpq URL may carry a password
        else:
            out[f"{prefix}{key}"] = MASK if key.endswith("api_key") and value else value
    return out


def _label(origin: str, config_file: str) -> str:
    if origin and origin == config_file:
        return "config.toml"
    return origin or "default"


def _resolved(settings: Settings, agent_id: str) -> dict[str, str]:
    """The paths an empty (or relative) setting stands for, as the commands resolve them: a
    new user reads where the memory is, not `""`."""
    out = {"state_dir": str(settings.state_path()),
           "server.endpoint": settings.server.endpoint or paths.default_endpoint()}
    try:
        workspace = settings.workspace_for(agent_id)
    except ValueError:  # an unknown agent: its error is shown under Agents
        return out
    return {**out, "workspace": str(workspace),
            "sessions_dir": str(sessions_dir(settings.for_agent(agent_id), agent_id, workspace))}


def effective(settings: Settings, agent_id: str) -> dict[str, Any]:
    s = settings.for_agent(agent_id)
    origins = origins_for(settings.loaded, agent_id)
    values = _flatten(s)
    if agent_id != DEFAULT_AGENT:  # the top-level keys are main's; this agent has its own
        own = settings.agents.get(agent_id)
        for key in ("workspace", "sessions_dir"):
            values[key] = getattr(own, key) if own is not None else ""
            origins[key] = origins.get(f"agents.{agent_id}.{key}", "")
    values.update(_resolved(settings, agent_id))
    loaded = settings.loaded
    oc = loaded.openclaw if loaded is not None else None
    agents = {}
    for a in settings.agent_ids():
        try:
            ws = settings.workspace_for(a)
        except ValueError as exc:
            agents[a] = {"error": str(exc)}
            continue
        agents[a] = {"workspace": str(ws),
                     "sessionsDir": str(sessions_dir(settings.for_agent(a), a, ws)),
                     "dreaming": "OpenClaw" if dreaming_left_to_openclaw(settings, ws)
                     else "openmemd"}
    from openmemd.api.connected_agents import read_agent_rows

    return {
        "agent": agent_id, "configFile": settings.config_file or None,
        "configFiles": config_files(settings),
        "settings": {k: {"value": v, "from": _label(origins.get(k, ""), settings.config_file)}
                     for k, v in values.items()},
        "agents": agents,
        "connectedAgents": [row.to_json() for row in read_agent_rows(s, agent_id)],
        "openclaw": None if oc is None else {
            "config": oc.path, "stateDir": oc.state_dir or None,
            "warning": oc.warning or None, "ignored": list(loaded.ignored if loaded else ()),
            "dreamingEnabled": oc.dreaming_enabled and not oc.warning},
    }


def run(settings: Settings, args: argparse.Namespace) -> int:
    info = effective(settings, args.agent)
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2, default=str))
        return 0
    print(f"Settings of agent {info['agent']}"
          + (f" (config file {info['configFile']})" if info["configFile"] else ""))
    width = max(len(k) for k in info["settings"])
    for key, item in info["settings"].items():
        print(f"  {key:<{width}} = {json.dumps(item['value'], default=str)}  ({item['from']})")
    print("Agents")
    for agent_id, a in info["agents"].items():
        if "error" in a:
            print(f"  {agent_id}: {a['error']}")
            continue
        print(f"  {agent_id}: workspace {a['workspace']} · transcripts {a['sessionsDir']}"
              f" · dreaming by {a['dreaming']}")
    for item in info["connectedAgents"]:
        row = ConnectedAgent.from_json(item)
        print(f"Agent {row.agent}: {row.summary}")
    oc = info["openclaw"]
    if oc is not None:
        print(f"OpenClaw: {oc['config']}")
        if oc["warning"]:
            print(f"  warning: {oc['warning']}")
        if oc["ignored"]:
            print("  ignored from openclaw.json: " + ", ".join(oc["ignored"]))
    return 0
