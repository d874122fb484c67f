"""`connect` and `disconnect` for any agent: plan every file's change first (a malformed file
refuses the whole command before anything is written), then back up and write file by file,
recording after each what was added, so that `disconnect` removes exactly that. When a file
is still byte for byte what openmemd wrote, disconnect puts the original back byte for byte;
when someone changed it since, it removes only openmemd's entry."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from openmemd.agents import claude_code_settings, codex_settings
from openmemd.agents.safe_edit import (
    EditError,
    FileState,
    backup,
    read_state,
    replace,
    unified_diff,
)
from openmemd.agents.wiring import Edit, Wiring

AGENTS: dict[str, ModuleType] = {claude_code_settings.NAME: claude_code_settings,
                                 codex_settings.NAME: codex_settings}
WHAT = {"sources": "the {agent} source in openmemd's config",
        "mcp-server": "openmemd's MCP server",
        "session-start-hook": "the SessionStart hook (startup context)"}


@dataclass(frozen=True)
class Step:
    """One file's change: from `before` to `after` (None: the file goes, as it was absent)."""

    edit: Edit
    before: FileState
    after: bytes | None
    added: dict[str, Any] | None = None  # connect: what the step adds, for the record

    def diff(self) -> str:
        return unified_diff(self.before, self.after)


def record_file(state_dir: Path, agent: str) -> Path:
    return state_dir / "connected" / f"{agent}.json"


def edits_for(agent: str, wiring: Wiring) -> list[Edit]:
    found: list[Edit] = AGENTS[agent].edits(wiring)
    return found


def plan_connect(agent: str, wiring: Wiring) -> list[Step]:
    steps = []
    for edit in edits_for(agent, wiring):
        before = read_state(edit.path)
        change = edit.add(before)
        if change is not None:
            steps.append(Step(edit, before, change[0], change[1]))
    return steps


def plan_disconnect(agent: str, wiring: Wiring, record: dict[str, Any]) -> list[Step]:
    steps = []
    by_name = {e.name: e for e in edits_for(agent, wiring)}
    for name, done in record.get("edits", {}).items():
        if name not in by_name:
            continue
        # the file connect wrote, even if $CLAUDE_CONFIG_DIR or $CODEX_HOME changed since
        edit = cast(Edit, dataclasses.replace(cast(Any, by_name[name]), path=Path(done["path"])))
        before = read_state(edit.path)
        after = _original(before, done)
        if after is _KEEP:
            after = edit.remove(before, done["added"])
            if after is None or after == before.data:
                continue  # nothing of openmemd's left there
        steps.append(Step(edit, before, after if isinstance(after, bytes) else None))
    return steps


_KEEP = object()


def _original(now: FileState, done: dict[str, Any]) -> object:
    """The file as it was before connect, when it is still exactly what connect wrote (None:
    there was no file), else _KEEP."""
    if now.sha256 != done.get("writtenSha256"):
        return _KEEP
    if not done.get("existed"):
        return None
    saved = read_state(Path(done["backup"])) if done.get("backup") else None
    if saved is None or saved.sha256 != done.get("originalSha256"):
        return _KEEP  # the backup is gone or changed: remove the entry instead
    return saved.data


def apply(agent: str, steps: list[Step], record_path: Path, *, connecting: bool,
          say: Callable[[str], None]) -> None:
    """Write the steps in order. Connect records each addition before writing it (killed in
    between, disconnect finds it, or finds nothing to remove); disconnect forgets it after."""
    for step in steps:
        saved = backup(step.before) if connecting else None
        if connecting:
            _update_record(record_path, agent, step, saved, connecting)
        replace(step.before, step.after)
        if not connecting:
            _update_record(record_path, agent, step, saved, connecting)
        what = WHAT.get(step.edit.name, step.edit.name).format(agent=agent)
        if connecting:
            say(f"added {what}: {step.before.path}"
                + (f" (backup: {saved})" if saved else " (new file)"))
        else:
            say(f"removed {what}: {step.before.path}" + (" (openmemd had created the file)"
                                                          if step.after is None else ""))


def read_record(record_path: Path) -> dict[str, Any]:
    state = read_state(record_path)
    if state.data is None:
        return {"agent": record_path.stem, "edits": {}}
    try:
        record = json.loads(state.text)
    except json.JSONDecodeError as exc:
        raise EditError(f"{record_path}: not valid JSON ({exc.msg}); openmemd cannot know what "
                        "it added: remove its entries by hand (see the backups)") from None
    if not isinstance(record, dict) or not isinstance(record.get("edits"), dict):
        raise EditError(f"{record_path}: not a record of openmemd's; left untouched")
    return record


def _update_record(record_path: Path, agent: str, step: Step, saved: Path | None,
                   connecting: bool) -> None:
    before = read_state(record_path)
    record = read_record(record_path)
    if connecting:
        after = step.after or b""
        record["edits"][step.edit.name] = {
            "path": str(step.before.path), "existed": step.before.exists,
            "originalSha256": step.before.sha256, "backup": str(saved) if saved else None,
            "writtenSha256": FileState(step.before.path, after, 0).sha256,
            "added": step.added}
    else:
        record["edits"].pop(step.edit.name, None)
    record_path.parent.mkdir(parents=True, exist_ok=True)
    if not record["edits"]:
        replace(before, None)
        return
    replace(before, (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode())
