"""Dreaming reached through the api: `MemoryIndex.dream()` / `explain_dream()` run the sweep and
its explanations on the index's own workspace, with its settings."""

from __future__ import annotations

from pathlib import Path

from openmemd.api import MemoryIndex
from openmemd.config import PHASES


def test_memory_index_dreams_and_explains_its_workspace(workspace: Path, make_settings) -> None:
    (workspace / "memory" / "2026-04-06.md").write_text(
        "# 2026-04-06\n\n- The gateway router needs the VLAN 42 tag.\n", encoding="utf-8")
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        assert index.search("gateway router VLAN", min_score=0.0)
        index.flush_recalls()
        every = index.dream(dry_run=True)
        light = index.dream("light", dry_run=True)
        found = index.explain_dream("gateway")
    assert every["phases"] == list(PHASES) and every["dryRun"] is True
    assert light["phases"] == ["light"]
    assert every["workspace"] == str(workspace)
    assert [c.path for c in found] == ["memory/2026-04-06.md"]
    assert not (workspace / "DREAMS.md").exists()  # a dry run writes nothing


def test_the_phase_list_is_written_once() -> None:
    # config.PHASES (defined in config/locate.py, light enough for the command line) is the one
    # list; the CLI, the protocol and the daemon derive theirs from it.
    package = Path(__file__).resolve().parents[1] / "daemon" / "openmemd"
    restated = [str(p.relative_to(package)) for p in package.rglob("*.py")
                if '"light", "rem", "deep"' in p.read_text(encoding="utf-8")]
    assert restated == ["config/locate.py"]
