"""What the app shows of the MCP servers (/mcp, notices): plain data, no pydantic-ai (the app imports it early)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

McpStatus = Literal["starting", "ready", "failed", "stopped"]


@dataclass(frozen=True)
class McpToolInfo:
    """One tool of a server: its own name, the name the model sees, its description's first line."""

    name: str
    exposed_as: str
    description: str = ""


@dataclass(frozen=True)
class McpServerView:
    """A server as /mcp shows it (every string is the server's or the config's: shown through ``visible``)."""

    name: str
    transport: str
    target: str
    source: str
    status: McpStatus
    reason: str = ""
    tools: tuple[McpToolInfo, ...] = ()


@dataclass(frozen=True)
class McpNotice:
    """One line the user should see: a server failed or stopped, or ``.mcp.json`` was ignored."""

    message: str
    severity: Literal["information", "warning", "error"] = "warning"
