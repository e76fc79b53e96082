"""The MCP servers a project's ``.mcp.json`` would start, as the trust prompt and ``deep-tui trust`` show them."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from tui.base.mcp_config import McpServerConfig
from tui.text.terminal_text import visible
from tui.trust.store import TrustRecord

SHOWN_VALUE_LIMIT = 160
"""A setting's value longer than this (as shown) is cut, with an ellipsis: a hostile value can be huge (a server's
line is cut at twice that)."""


SERVER_KEY_PREFIX = "mcpServers."
"""How a ``.mcp.json`` server is kept in a trust record's ``settings`` (``mcpServers.NAME`` → what it runs)."""


@dataclass(frozen=True)
class ServerEntry:
    """One MCP server the project's ``.mcp.json`` would start, as shown text."""

    name: str
    what: str
    """The command line (``shlex``-quoted) or the URL, with the ``env`` / ``headers`` it sets."""
    since_trust: bool = False
    """New or different since the user trusted the project (only for a changed config)."""


def shown_server(server: McpServerConfig) -> str:
    """What ``server`` runs or reaches, as one line of plain text (escaped, cut like a setting's value, but at
    twice the length: a command line is what the user must read)."""
    if server.transport == "stdio":
        text = shlex.join([server.command, *server.args])
        extra = " ".join(f"{key}={value}" for key, value in server.env.items())
        text += f"  (env: {extra})" if extra else ""
    else:
        text = f"{server.url} ({server.transport})"
        extra = " ".join(f"{key}: {value}" for key, value in server.headers.items())
        text += f"  (headers: {extra})" if extra else ""
    if server.approval is not None:
        text += f"  (approval: {server.approval})"
    text = visible(text)
    limit = 2 * SHOWN_VALUE_LIMIT
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_servers(servers: Sequence[McpServerConfig], earlier: TrustRecord | None) -> list[ServerEntry]:
    """The servers a ``.mcp.json`` would start, marked where they differ from the trusted ones."""
    entries = []
    for server in servers:
        what = shown_server(server)
        since = earlier is not None and earlier.settings.get(SERVER_KEY_PREFIX + server.name) != what
        entries.append(ServerEntry(visible(server.name), what, since))
    return entries
