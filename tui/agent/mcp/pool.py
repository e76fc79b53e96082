"""The server pool as the toolset sees it: a small protocol, so the toolset knows nothing of how servers run.

:class:`~tui.agent.mcp.servers.McpServers` is the pool (it starts, pings and stops the servers);
:class:`~tui.agent.mcp.toolset.McpToolset` only offers and calls what a pool lists. Neither imports the other's
module for its type: both meet here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pydantic_ai import RunContext
from pydantic_ai.toolsets.abstract import ToolsetTool

from tui.text.terminal_text import visible

ERROR_LIMIT = 200
"""The longest one-line description of an error a server caused (see :func:`describe_error`)."""


@dataclass(frozen=True)
class PoolTool:
    """One tool of a ready server: the server's name, the tool's own name there, pydantic-ai's description."""

    server: str
    name: str
    tool: ToolsetTool[Any]


class ServerPool(Protocol):
    """What the toolset needs of the running servers."""

    async def wait_started(self) -> None:
        """Until no server is still starting (each is bounded by its own budget)."""

    def current_tools(self) -> dict[str, PoolTool]:
        """The name the model sees → the tool behind it, for the servers ready now."""

    async def call(self, tool: PoolTool, args: dict[str, Any], ctx: RunContext[Any]) -> Any:
        """Call ``tool`` on its server (raises what the server's client raises; ``ToolFailed`` when it is gone)."""

    async def check(self, server: str) -> str | None:
        """Why ``server`` no longer answers, or ``None`` when it does."""

    def mark_dead(self, server: str, problem: str) -> None:
        """A call found ``server`` gone: fail it now (one notice; its tools leave the pool)."""


def describe_error(error: BaseException) -> str:
    """An error in one line, cut to :data:`ERROR_LIMIT` characters (the server's text is hostile: made visible)."""
    if isinstance(error, BaseExceptionGroup) and error.exceptions:
        return describe_error(error.exceptions[0])
    text = visible(" ".join(str(error).split())) or type(error).__name__
    return text if len(text) <= ERROR_LIMIT else text[: ERROR_LIMIT - 1] + "…"
