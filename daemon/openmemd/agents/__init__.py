"""Other coding agents on this machine (Claude Code, Codex): their sessions, settings and hooks."""
