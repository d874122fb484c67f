"""Other agents on this machine (Claude Code, Codex): one module per agent behind one small
interface."""
