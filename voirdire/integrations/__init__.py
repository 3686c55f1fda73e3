"""voirdire inside other tools: every registered protocol as an Inspect AI scorer (``voirdire.integrations.inspect``,
loaded by Inspect's entry point), voirdire as an MCP server (``build_server``), and a pytest plugin
(``voirdire.integrations.pytest_plugin``, loaded by pytest's entry point).

The face is lazy: pytest loads the plugin in every test run of an environment with voirdire installed, and that
must not import the rest of voirdire."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from voirdire.integrations.mcp import McpConfig, McpError, build_server

__all__ = ["McpConfig", "McpError", "build_server"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from voirdire.integrations import mcp

        return getattr(mcp, name)
    raise AttributeError(f"module 'voirdire.integrations' has no attribute {name!r}")
