"""Other agents on this machine (Claude Code, Codex): one module per agent behind one small
interface.

`claude_code_sessions` / `codex_sessions` read each agent's session files (JSONL) into message
lines with their timestamp, session and project (`session_records` is the interface they share:
pure functions from bytes to lines, nothing masked yet: the index masks them as it does any
transcript). `claude_code_settings` / `codex_settings` wire openmemd into each agent's own
settings for `openmemd connect` (`wiring` is their interface; `safe_edit` the backed-up, atomic,
undoable write). `claude_code_hook` is Claude Code's side of the SessionStart hook's wire.
"""
