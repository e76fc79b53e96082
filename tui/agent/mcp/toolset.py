"""The running MCP servers' tools as one pydantic-ai toolset, the same for every session of the process.

Each tool keeps the server's name for it, or is offered as ``SERVER_tool`` where it clashes (the names come
from :meth:`McpServers.current_tools`) and carries :data:`~tui.base.metadata_keys.MCP_SERVER_KEY`, so the write gate
asks before it runs. A call whose server turns out to be gone fails the server at once (one notice) and tells
the model so.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from tui.base.metadata_keys import MCP_SERVER_KEY
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from tui.agent.mcp.servers import McpServers


def describe_error(error: BaseException) -> str:
    """An error in one line, cut to 200 characters (the server's text is hostile: made visible)."""
    if isinstance(error, BaseExceptionGroup) and error.exceptions:
        return describe_error(error.exceptions[0])
    text = visible(" ".join(str(error).split())) or type(error).__name__
    return text if len(text) <= 200 else text[:199] + "…"


class McpToolset(AbstractToolset[Any]):
    """The ready servers' tools as one toolset; its servers' lives are :class:`McpServers`' (not a run's)."""

    def __init__(self, servers: McpServers) -> None:
        self._servers = servers

    @property
    def id(self) -> str | None:
        return "mcp-servers"

    @property
    def label(self) -> str:
        return "MCP servers"

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        await self._servers.wait_started()  # a turn sent while servers start gets their tools (bounded)
        tools: dict[str, ToolsetTool[Any]] = {}
        for exposed, (server, name) in self._servers.current_tools().items():
            tool = server.tools[name]
            definition = dataclasses.replace(tool.tool_def, name=exposed, metadata={
                **(tool.tool_def.metadata or {}), MCP_SERVER_KEY: server.config.name})
            tools[exposed] = dataclasses.replace(tool, toolset=self, tool_def=definition)
        return tools

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any],
                        tool: ToolsetTool[Any]) -> Any:
        found = self._servers.current_tools().get(name)
        if found is None:
            raise ToolFailed(f"{name} is not available: its MCP server is not running (see /mcp)")
        server, original = found
        toolset = server.toolset
        try:
            return await toolset.call_tool(original, tool_args, ctx, server.tools[original])
        except Exception as error:
            problem = await self._servers.check(server)
            if problem is None:
                raise
            self._servers.mark_dead(server.config.name, problem)
            raise ToolFailed(f"MCP server {server.config.name} stopped during the call to {original} "
                             f"({describe_error(error)}); its tools are no longer available") from error
