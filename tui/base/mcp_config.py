"""MCP servers the user configured: ``[mcp.servers.NAME]`` in config.toml, and a trusted project's ``.mcp.json``.

Parsing only (no MCP client here): every value is checked when loaded and a bad one raises
:class:`~tui.base.config.ConfigError` naming the key, like the rest of the configuration.

``.mcp.json`` is Claude Code's format, ``{"mcpServers": {NAME: {...}}}``, where a server is
``{"command", "args", "env"}`` (stdio) or ``{"type": "http" | "sse", "url", "headers"}``. It belongs to the
project: it is part of the project's config, covered by the project's trust (:mod:`tui.trust.project`), and
its servers start only once the user trusts the project (:func:`parse_project_servers`).

``${VAR}`` and ``${VAR:-default}`` in ``command``, ``args``, ``env``, ``url`` and ``headers`` are replaced by
deep-tui's environment when the server starts (:func:`expand_variables`): the way to hand a server a token
without writing it into the file. Nothing else from deep-tui's environment reaches a stdio server beyond a
minimal set (see docs/security.md).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

McpTransport = Literal["stdio", "http", "sse"]


class McpConfigError(ValueError):
    """An MCP server entry that cannot be used (``tui.base.config`` reports it as a ``ConfigError``)."""


APPROVAL_NAMES = ("ask", "always", "never")
DEFAULT_STARTUP_TIMEOUT = 10.0
"""Seconds a server has to start and answer the MCP handshake before it is given up on."""
PROJECT_FILE_NAME = ".mcp.json"
PROJECT_FILE_LIMIT = 1024 * 1024
"""A ``.mcp.json`` larger than this is not read."""

_SERVER_KEYS = {"command", "args", "env", "url", "headers", "approval", "timeout"}
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class McpServerConfig:
    """One MCP server: a command to start (stdio) or a URL to connect to (streamable HTTP or SSE)."""

    name: str
    """Letters, digits, ``-`` and ``_``: it prefixes the server's tools when their names clash."""
    transport: McpTransport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    """Added to the minimal environment a stdio server starts with."""
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    approval: str | None = None
    """``ask``, ``always`` or ``never`` for this server's tools; ``None``: ``[tools] mcp`` decides."""
    timeout: float = DEFAULT_STARTUP_TIMEOUT
    source: str = "config"
    """Where it was configured (the config file, or the project's ``.mcp.json``)."""

    @property
    def target(self) -> str:
        """What the server is, in one line: the command line or the URL (for /mcp and notices)."""
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])
        return self.url


@dataclass(frozen=True)
class McpSettings:
    """The ``[mcp]`` table: the user's MCP servers, in the order configured."""

    servers: tuple[McpServerConfig, ...] = ()


def parse_mcp_table(value: Any, source: str) -> McpSettings:
    """``[mcp]`` from config.toml: only ``servers``, a table of tables."""
    if not isinstance(value, dict):
        raise McpConfigError(f"{source}: [mcp] must be a table")
    for key in value:
        if key != "servers":
            raise McpConfigError(f"{source}: unknown key mcp.{key}")
    servers = value.get("servers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(f"{source}: [mcp.servers] must be a table")
    return McpSettings(tuple(_server_from_toml(name, table, source) for name, table in servers.items()))


def _server_from_toml(name: str, table: Any, source: str) -> McpServerConfig:
    where = f"mcp.servers.{name}"
    _check_name(name, source, where)
    if not isinstance(table, dict):
        raise McpConfigError(f"{source}: [{where}] must be a table")
    for key in table:
        if key not in _SERVER_KEYS:
            raise McpConfigError(f"{source}: unknown key {where}.{key}")
    approval = table.get("approval")
    if approval is not None and approval not in APPROVAL_NAMES:
        raise McpConfigError(f"{source}: {where}.approval must be one of {', '.join(APPROVAL_NAMES)} (got {approval!r})")
    timeout = table.get("timeout", DEFAULT_STARTUP_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or not (0.1 <= timeout <= 600):
        raise McpConfigError(f"{source}: {where}.timeout must be a number of seconds between 0.1 and 600 (got {timeout!r})")
    transport: McpTransport = "http" if "url" in table else "stdio"
    return _server(name, table, source, where, transport, approval=approval, timeout=float(timeout))


def _server(name: str, table: dict[str, Any], source: str, where: str, transport: McpTransport, *,
            approval: str | None = None, timeout: float = DEFAULT_STARTUP_TIMEOUT) -> McpServerConfig:
    has_command, has_url = "command" in table, "url" in table
    if has_command == has_url:
        raise McpConfigError(f"{source}: {where} needs either command (a program to start) or url (a server to reach)")
    if has_command:
        for key in ("url", "headers"):
            if key in table:
                raise McpConfigError(f"{source}: {where}.{key} is for a server reached by url, not a command")
        command = _string(table["command"], source, f"{where}.command")
        if not command.strip():
            raise McpConfigError(f"{source}: {where}.command must not be empty")
        args = table.get("args", [])
        if not isinstance(args, list):
            raise McpConfigError(f"{source}: {where}.args must be a list of strings")
        return McpServerConfig(
            name, "stdio", command=command,
            args=tuple(_string(arg, source, f"{where}.args") for arg in args),
            env=_string_table(table.get("env", {}), source, f"{where}.env"),
            approval=approval, timeout=timeout, source=source)
    for key in ("args", "env"):
        if key in table:
            raise McpConfigError(f"{source}: {where}.{key} is for a server started by command, not a url")
    url = _string(table["url"], source, f"{where}.url")
    if not re.match(r"^https?://[^\s/]+", url):
        raise McpConfigError(f"{source}: {where}.url must be an http:// or https:// address (got {url!r})")
    return McpServerConfig(name, transport, url=url,
                           headers=_string_table(table.get("headers", {}), source, f"{where}.headers"),
                           approval=approval, timeout=timeout, source=source)


def _check_name(name: str, source: str, where: str) -> None:
    if not _NAME.match(name):
        raise McpConfigError(f"{source}: {where}: a server name may only contain letters, digits, '-' and '_' "
                          "(at most 40)")


def _string(value: Any, source: str, key: str) -> str:
    if not isinstance(value, str):
        raise McpConfigError(f"{source}: {key} must be a string (got {value!r})")
    return value


def _string_table(value: Any, source: str, key: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise McpConfigError(f"{source}: {key} must be a table of strings")
    return {str(name): _string(item, source, f"{key}.{name}") for name, item in value.items()}


# -- the project's .mcp.json ------------------------------------------------------------------------------


def parse_project_servers(raw: bytes, where: str) -> tuple[McpServerConfig, ...]:
    """The servers of a ``.mcp.json`` whose bytes are ``raw`` (``where`` names the file in errors).

    Reading the file is the trust code's (:func:`tui.trust.project.read_project_config`): it reads it without
    following a link, covers its bytes with the project's trust, and hands these servers to the launch only
    once the project is trusted. Raises :class:`McpConfigError` for bad JSON or a bad entry."""
    import json  # only a project with a .mcp.json needs it: not for the first frame

    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise McpConfigError(f"{where}: not valid JSON ({error})") from None
    return tuple(dataclasses.replace(server, source=PROJECT_FILE_NAME) for server in _servers_from_json(data, where))


def _servers_from_json(data: Any, source: str) -> tuple[McpServerConfig, ...]:
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise McpConfigError(f"{source}: expected {{\"mcpServers\": {{NAME: {{...}}}}}}")
    servers: list[McpServerConfig] = []
    for name, entry in data.get("mcpServers", {}).items():
        where = f"mcpServers.{name}"
        _check_name(name, source, where)
        if not isinstance(entry, dict):
            raise McpConfigError(f"{source}: {where} must be an object")
        entry = dict(entry)
        kind = entry.pop("type", "stdio" if "command" in entry else "http")
        if kind not in ("stdio", "http", "sse", "streamable-http"):
            raise McpConfigError(f"{source}: {where}.type must be stdio, http or sse (got {kind!r})")
        for key in entry:
            if key not in {"command", "args", "env", "url", "headers"}:
                raise McpConfigError(f"{source}: unknown key {where}.{key}")
        transport: McpTransport = "sse" if kind == "sse" else ("stdio" if kind == "stdio" else "http")
        servers.append(_server(name, entry, source, where, transport))
    return tuple(servers)


# -- ${VAR} ---------------------------------------------------------------------------------------------


def expand_variables(text: str, environ: Mapping[str, str]) -> str:
    """``${VAR}`` → its value in ``environ`` (empty when unset); ``${VAR:-default}`` → ``default`` when unset."""
    return _VARIABLE.sub(lambda match: environ.get(match.group(1), match.group(2) or ""), text)
