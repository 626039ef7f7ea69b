"""Coding agents: the hooks that brief, recall and flush, installing them, and the MCP server."""
