"""Fake Claude Code and Codex homes, in the formats their session files have.

Claude Code: the 2.x session format (checked against 2.0.x/2.1.x files as documented by the
community schemas: records `user`/`assistant`/`summary`/`system`/`file-history-snapshot`,
`message.content` blocks `text`/`tool_use`/`tool_result`, `sessionId`, `cwd`, `timestamp`,
`uuid`/`parentUuid`, `isSidechain`; subagents in `<session>/subagents/agent-*.jsonl`).
Codex: the rollout format of Codex CLI 0.46–0.6x (`{timestamp, type, payload}` lines:
`session_meta`, `turn_context`, `response_item` message/function_call/function_call_output,
`event_msg` user_message/agent_message copies, `compacted`).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

PROJECT = "/home/dev/code/billing"
OTHER_PROJECT = "/home/dev/code/garden"
SECRET = "sk-live-abcdefghijklmnop123456"
CLAUDE_SESSION = "5f1c2b7e-1111-4d2a-9c3e-000000000001"
CODEX_SESSION = "0199aa00-2222-7000-8000-000000000002"


def iso(day: datetime) -> str:
    return day.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _jsonl(records: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def claude_records(when: datetime) -> list[dict[str, object]]:
    base = {"sessionId": CLAUDE_SESSION, "cwd": PROJECT, "version": "2.0.76",
            "gitBranch": "main", "userType": "external", "isSidechain": False}
    t = iso(when)
    return [
        {"type": "summary", "summary": "Billing retry policy", "leafUuid": "u4"},
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": t,
         "message": {"role": "user", "content": "What did we settle for failed invoices?"}},
        {**base, "type": "assistant", "uuid": "u2", "parentUuid": "u1", "timestamp": t,
         "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [
             {"type": "thinking", "thinking": "hmm", "signature": "x"},
             {"type": "text", "text": "We decided billing retries failed invoices three times "
                                      "with the quokka backoff schedule."},
             {"type": "tool_use", "id": "t1", "name": "Bash",
              "input": {"command": "grep -rn quokka src/billing", "description": "find"}}]}},
        {**base, "type": "user", "uuid": "u3", "parentUuid": "u2", "timestamp": t,
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": "tool output zanzibar"}]}},
        {"type": "file-history-snapshot", "messageId": "u3", "snapshot": {"x": "zanzibar"}},
        {**base, "type": "user", "uuid": "u4", "parentUuid": "u3", "timestamp": t,
         "message": {"role": "user", "content": f"the stripe key is {SECRET} for staging"}},
        {"type": "brand-new-record-kind", "payload": "ignored"},
    ]


def codex_records(when: datetime) -> list[dict[str, object]]:
    t = iso(when)
    return [
        {"timestamp": t, "type": "session_meta", "payload": {
            "id": CODEX_SESSION, "timestamp": t, "cwd": OTHER_PROJECT, "originator": "codex_cli_rs",
            "cli_version": "0.46.0", "instructions": None, "source": "cli"}},
        {"timestamp": t, "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]}},
        {"timestamp": t, "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "Plant the marigolds beside the tomatoes."}]}},
        {"timestamp": t, "type": "event_msg", "payload": {
            "type": "user_message", "message": "Plant the marigolds beside the tomatoes.",
            "kind": "plain"}},
        {"timestamp": t, "type": "turn_context", "payload": {
            "cwd": OTHER_PROJECT, "approval_policy": "on-request", "model": "gpt-5-codex"}},
        {"timestamp": t, "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": "c1",
            "arguments": json.dumps({"command": ["bash", "-lc", "ls beds"]})}},
        {"timestamp": t, "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "c1", "output": "bed-output-wombat"}},
        {"timestamp": t, "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "Marigolds deter aphids; the garden plan uses "
                                                "the pelican layout."}]}},
        {"timestamp": t, "type": "event_msg", "payload": {
            "type": "agent_message", "message": "Marigolds deter aphids; the garden plan uses "
                                                "the pelican layout."}},
        {"timestamp": t, "type": "compacted", "payload": {
            "message": "Summary: garden beds planned with the pelican layout."}},
        {"timestamp": t, "type": "future_record", "payload": {}},
    ]


def make_homes(root: Path, claude_when: datetime, codex_when: datetime) -> dict[str, Path]:
    """HOME with ~/.claude/projects and ~/.codex/sessions; returns the files written."""
    home = root / "home"
    project_dir = home / ".claude" / "projects" / PROJECT.replace("/", "-")
    project_dir.mkdir(parents=True)
    claude = project_dir / f"{CLAUDE_SESSION}.jsonl"
    # a torn last line: the agent is still writing it
    claude.write_text(_jsonl(claude_records(claude_when)) + '{"type": "user", "message": {"ro')
    sub = project_dir / CLAUDE_SESSION / "subagents" / "agent-a1b2c3d.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text(_jsonl([{
        "type": "assistant", "sessionId": CLAUDE_SESSION, "cwd": PROJECT, "isSidechain": True,
        "agentId": "a1b2c3d", "uuid": "s1", "parentUuid": None, "timestamp": iso(claude_when),
        "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Subagent found the ledger uses narwhal rounding."}]}}]))
    day = codex_when.astimezone(timezone.utc)
    codex_dir = home / ".codex" / "sessions" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
    codex_dir.mkdir(parents=True)
    codex = codex_dir / f"rollout-{day:%Y-%m-%dT%H-%M-%S}-{CODEX_SESSION}.jsonl"
    codex.write_text(_jsonl(codex_records(codex_when)))
    return {"home": home, "claude": claude, "subagent": sub, "codex": codex}
