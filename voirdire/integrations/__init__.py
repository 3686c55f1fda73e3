"""voirdire inside other tools: every registered protocol as an Inspect AI scorer (``voirdire.integrations.inspect``,
loaded by Inspect's entry point); voirdire as an MCP server (``build_server``); sessions as OpenTelemetry traces
(``export_transcript``, ``Follower``), their verdicts as Arize Phoenix annotations; a pytest plugin
(``voirdire.integrations.pytest_plugin``, loaded by pytest's entry point).

The face is lazy: pytest loads the plugin in every test run of an environment with voirdire installed, and that
must not import the rest of voirdire."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from voirdire.integrations.mcp import McpConfig, McpError, build_server
    from voirdire.integrations.otel import AlreadySent, Follower, OtelError, export_transcript
    from voirdire.integrations.phoenix import PhoenixError

_WHERE = {
    "AlreadySent": "otel",
    "McpConfig": "mcp",
    "McpError": "mcp",
    "build_server": "mcp",
    "Follower": "otel",
    "OtelError": "otel",
    "export_transcript": "otel",
    "PhoenixError": "phoenix",
}
__all__ = [
    "AlreadySent",
    "Follower",
    "McpConfig",
    "McpError",
    "OtelError",
    "PhoenixError",
    "build_server",
    "export_transcript",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f"voirdire.integrations.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'voirdire.integrations' has no attribute {name!r}")
