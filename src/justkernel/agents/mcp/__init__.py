"""MCP tools for teams: servers from `mcp.toml` (`settings.mcp`), reached through
langchain-mcp-adapters, offered to a team under the lab's rules (`toolbox`)."""

from justkernel.agents.mcp.toolbox import McpServerError, McpToolbox, offered_tools

__all__ = ["McpServerError", "McpToolbox", "offered_tools"]
