"""Enabling an agent's sessions as a source: `sources` in openmemd's own config file (TOML,
comments kept), written as the sources in effect plus this one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmemd.agents.formats import dump_toml, load_toml, plain
from openmemd.agents.safe_edit import EditError, FileState


@dataclass(frozen=True)
class SourcesEdit:
    path: Path
    source: str
    in_effect: list[str]  # the settings' sources now (defaults < openclaw.json < this file)
    name: str = "sources"

    def add(self, state: FileState) -> tuple[bytes, dict[str, Any]] | None:
        doc = load_toml(state)
        written = plain(doc.get("sources"))
        if self.source in self.in_effect:
            return None
        if written is not None and not isinstance(written, list):
            raise EditError(f"{self.path}: 'sources' is not a list; left untouched")
        value = [*(written or self.in_effect), self.source]
        doc["sources"] = value
        return dump_toml(doc, state), {"source": self.source, "previous": written,
                                       "written": value}

    def remove(self, state: FileState, added: Mapping[str, Any]) -> bytes | None:
        doc = load_toml(state)
        now = plain(doc.get("sources"))
        if not isinstance(now, list) or added["source"] not in now:
            return None
        if added.get("previous") is None and now == added.get("written"):
            del doc["sources"]  # the key was openmemd's alone: the layers below decide again
        else:  # edited since: only the source goes
            doc["sources"] = [s for s in now if s != added["source"]] or ["memory"]
        return dump_toml(doc, state)
