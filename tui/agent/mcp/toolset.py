"""The running MCP servers' tools as one pydantic-ai toolset, the same for every session of the process.

Each tool keeps the server's name for it, or is offered as ``SERVER_tool`` where it clashes (the names come
from the pool's :meth:`~tui.agent.mcp.pool.ServerPool.current_tools`) and carries
:data:`~tui.base.metadata_keys.MCP_SERVER_KEY`, so the approval gate asks before it runs. A call whose server
turns out to be gone fails the server at once (one notice) and tells the model so. The toolset knows the
servers only through the small :class:`~tui.agent.mcp.pool.ServerPool` protocol.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from tui.agent.mcp.pool import ServerPool, describe_error
from tui.base.metadata_keys import MCP_SERVER_KEY


class McpToolset(AbstractToolset[Any]):
    """The ready servers' tools as one toolset; its servers' lives are the pool's (not a run's)."""

    def __init__(self, pool: ServerPool) -> None:
        self._pool = pool

    @property
    def id(self) -> str | None:
        return "mcp-servers"

    @property
    def label(self) -> str:
        return "MCP servers"

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        await self._pool.wait_started()  # a turn sent while servers start gets their tools (bounded)
        tools: dict[str, ToolsetTool[Any]] = {}
        for exposed, offered in self._pool.current_tools().items():
            tool = offered.tool
            definition = dataclasses.replace(tool.tool_def, name=exposed, metadata={
                **(tool.tool_def.metadata or {}), MCP_SERVER_KEY: offered.server})
            tools[exposed] = dataclasses.replace(tool, toolset=self, tool_def=definition)
        return tools

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any],
                        tool: ToolsetTool[Any]) -> Any:
        offered = self._pool.current_tools().get(name)
        if offered is None:
            raise ToolFailed(f"{name} is not available: its MCP server is not running (see /mcp)")
        try:
            return await self._pool.call(offered, tool_args, ctx)
        except Exception as error:
            problem = await self._pool.check(offered.server)
            if problem is None:
                raise
            self._pool.mark_dead(offered.server, problem)
            raise ToolFailed(f"MCP server {offered.server} stopped during the call to {offered.name} "
                             f"({describe_error(error)}); its tools are no longer available") from error
