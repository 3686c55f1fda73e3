"""voirdire inside other tools: every registered protocol as an Inspect AI scorer (``voirdire.integrations.inspect``,
loaded by Inspect's entry point) and voirdire as an MCP server (``build_server``)."""

from voirdire.integrations.mcp import McpConfig, McpError, build_server

__all__ = ["McpConfig", "McpError", "build_server"]
