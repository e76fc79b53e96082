"""pydantic-ai's MCP client for one configured server: transport, environment, timeouts.

Imported only when a server is configured (fastmcp is a sizeable import). Two things are set before the
import so that neither a project directory nor the client's defaults reach the terminal or the client's
settings: fastmcp would read a ``.env`` file in the current directory (the project's) for its settings, and
it logs on stderr (under the app: over the screen); its log goes to deep-tui's log instead.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

os.environ.setdefault("FASTMCP_ENV_FILE", os.devnull)  # not the project's .env
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp.client.transports import SSETransport, StreamableHttpTransport
from pydantic_ai.mcp import MCPToolset

from tui.agent.mcp.server_log import ServerLog
from tui.agent.mcp.stdio import BoundedStdioTransport
from tui.base.mcp_config import McpServerConfig, expand_variables

_fastmcp_log = logging.getLogger("fastmcp")
for _handler in list(_fastmcp_log.handlers):
    _fastmcp_log.removeHandler(_handler)
_fastmcp_log.propagate = True  # into deep-tui's log file, never the terminal


def server_environment(config: McpServerConfig, environ: Mapping[str, str], passed: Sequence[str]) -> dict[str, str]:
    """A stdio server's environment: the ``passed`` variables deep-tui has, then the config's ``env``."""
    env = {name: environ[name] for name in passed if name in environ}
    env.update({name: expand_variables(value, environ) for name, value in config.env.items()})
    return env


def build_mcp_toolset(config: McpServerConfig, *, workdir: Path, environ: Mapping[str, str], stderr: TextIO | None,
                      passed: Sequence[str], handshake_timeout: float | None = None) -> MCPToolset[Any]:
    """The toolset for ``config``, not yet connected (entering it starts the server); ``handshake_timeout``:
    the seconds it has to answer the handshake (its ``timeout`` by default)."""
    transport: Any
    if config.transport == "stdio":
        transport = BoundedStdioTransport(  # not fastmcp's StdioTransport: see stdio.py
            expand_variables(config.command, environ),
            [expand_variables(arg, environ) for arg in config.args],
            env=server_environment(config, environ, passed),
            cwd=str(workdir),
            stderr=stderr if stderr is not None else subprocess.DEVNULL,
        )
    else:
        headers = {name: expand_variables(value, environ) for name, value in config.headers.items()}
        url = expand_variables(config.url, environ)
        kind = SSETransport if config.transport == "sse" else StreamableHttpTransport
        transport = kind(url, headers=headers)
    # The server's instructions stay out of the agent's (it is not the user); no sampling, elicitation or roots.
    # Its log and progress notifications become deep-tui's log lines, made visible (server_log).
    server_log = ServerLog(config.name)
    init_timeout = config.timeout if handshake_timeout is None else handshake_timeout
    return MCPToolset(transport, id=config.name, tool_error_behavior="failed", init_timeout=init_timeout,
                      max_retries=1, include_instructions=False, log_handler=server_log.log,
                      progress_handler=server_log.progress)
