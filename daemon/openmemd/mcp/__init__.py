"""MCP over stdio (the official SDK): the tools, the stdio server and the pipe to a
daemon-hosted session."""
