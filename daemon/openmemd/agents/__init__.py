"""Other agents on this machine (Claude Code, Codex): one module per agent behind one small
interface.

`claude_code_sessions` / `codex_sessions` read each agent's session files (JSONL) into message
lines with their timestamp, session and project (`session_records` is the interface they share:
pure functions from bytes to lines, nothing masked yet: the index masks them as it does any
transcript).
"""
