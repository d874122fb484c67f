"""The SQLite backend: OpenClaw's index format, one file per agent, FTS5 and sqlite-vec."""
