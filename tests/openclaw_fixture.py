"""A fake OpenClaw install in a temp dir (HOME redirected), shared by the OpenClaw tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

OPENCLAW_JSON = """\
// openclaw.json as a user writes it: JSON5, comments and trailing commas
{
  agents: {
    defaults: {
      memorySearch: {
        provider: "ollama",
        model: "nomic-embed-text",
        remote: {
          baseUrl: "http://127.0.0.1:11434",
          apiKey: "sk-ollama-secret-0123456789abcdef",
          headers: { "X-Team": "blue" },
        },
        sources: ["memory", "sessions"],
        experimental: { sessionMemory: true },
        extraPaths: ["notes"],
        chunking: { tokens: 300, overlap: 40 },
        query: {
          maxResults: 2,
          minScore: 0.05,
          hybrid: {
            vectorWeight: 0.6, textWeight: 0.4, candidateMultiplier: 5,
            mmr: { enabled: true, lambda: 0.5 },
            temporalDecay: { enabled: true, halfLifeDays: 10 },
          },
        },
        store: { path: "~/.openclaw/memory/{agentId}.sqlite" },
        sync: { sessions: { deltaBytes: 100000, deltaMessages: 3 } },
      },
    },
    list: [
      { id: "main", default: true },  /* the default agent */
      { id: "work", memorySearch: { extraPaths: ["projects"], query: { maxResults: 4 } } },
    ],
  },
  memory: { citations: "off", },
  plugins: { entries: { "memory-core": { config: { dreaming: {
    enabled: true, frequency: "0 4 * * *",
  } } } } },
}
"""


def message(role: str, text: str) -> str:
    return json.dumps({"type": "message", "message": {"role": role, "content": text},
                       "timestamp": "2026-01-02T03:04:05Z"})


@dataclass
class FakeOpenClaw:
    home: Path
    state: Path
    config: Path  # an openmemd config.toml (provider none, no watch debounce)

    @property
    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "OPENCLAW_STATE_DIR": str(self.state)}

    @property
    def workspace(self) -> Path:
        return self.state / "workspace"

    @property
    def sessions(self) -> Path:
        return self.state / "agents" / "main" / "sessions"

    def write_json(self, text: str) -> None:
        (self.state / "openclaw.json").write_text(text, encoding="utf-8")


def make_openclaw(tmp_path: Path, toml: str = "") -> FakeOpenClaw:
    home = tmp_path / "home"
    state = home / ".openclaw"
    for d in ("workspace/memory", "workspace-work/memory", "agents/main/sessions",
              "agents/work/sessions"):
        (state / d).mkdir(parents=True)
    (state / "openclaw.json").write_text(OPENCLAW_JSON, encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'state_dir = "{tmp_path / "omstate"}"\n{toml}\n[embedding]\n'
                      'provider = "none"\n', encoding="utf-8")
    return FakeOpenClaw(home, state, config)
