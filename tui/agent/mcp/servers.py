"""The user's MCP servers, running for the whole process, and their tools as one toolset for every session.

Each server lives in a task of its own (:meth:`McpServers.start`, called once the app has drawn its first
frame, or by ``deep-tui run`` before its turn): it starts the server through pydantic-ai's MCP client
(:class:`pydantic_ai.mcp.MCPToolset` over a stdio, streamable-HTTP or SSE transport), waits at most the
server's ``timeout`` (stretched on a loaded machine: :mod:`tui.agent.mcp.start_budget`) for the handshake and its
tool list, then pings it every :attr:`health_interval`
seconds. A server that fails to start, stops answering or exits becomes ``failed`` with a one-line reason,
its tools leave the toolset, and every listener hears one notice; the session goes on.

The toolset (:class:`McpToolset`) offers the ready servers' tools under their own names, or as
``SERVER_tool`` where a name clashes with deep-tui's own tools or another server's; each tool carries
:data:`~tui.base.metadata_keys.MCP_SERVER_KEY` so the write gate asks before it runs
(:mod:`tui.agent.approval.mcp_calls`). What a tool returns is an ordinary tool return: the chain evicts it when
it is large.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets.abstract import ToolsetTool

from tui.agent.approval.mcp_calls import McpRoute
from tui.agent.mcp.pool import PoolTool, describe_error
from tui.agent.mcp.start_budget import budget_words, handshake_budget, load_stretch
from tui.agent.mcp.status import McpNotice, McpServerView, McpStatus, McpToolInfo
from tui.agent.mcp.toolset import McpToolset
from tui.base.config import Settings
from tui.base.mcp_config import McpServerConfig
from tui.base.nofollow import LinkRefusedError, open_file
from tui.base.paths import DataDir
from tui.text.terminal_text import visible

logger = logging.getLogger(__name__)

PASSED_ENVIRONMENT = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
                      "TZ", "SYSTEMROOT", "PATHEXT", "COMSPEC", "TEMP", "TMP", "APPDATA", "LOCALAPPDATA")
"""The only variables of deep-tui's environment a stdio server inherits (plus what its ``env`` sets)."""

HEALTH_INTERVAL = 5.0
"""Seconds between two pings of a ready server."""
PING_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
"""Seconds a server has to shut down when deep-tui closes."""
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_REASON_LIMIT = 200
_METHOD_NOT_FOUND = -32601
"""JSON-RPC's "method not found": an answer, so the server is alive."""


@dataclass
class _Server:
    config: McpServerConfig
    status: McpStatus = "starting"
    reason: str = ""
    toolset: Any = None
    """The pydantic-ai ``MCPToolset`` while the server runs."""
    tools: dict[str, ToolsetTool[Any]] = field(default_factory=dict)
    """The server's tools by its own names, as pydantic-ai describes them (filled when ready)."""
    descriptions: dict[str, str] = field(default_factory=dict)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the server is no longer ``starting``."""
    task: asyncio.Task[None] | None = None


class McpServers:
    """Every configured MCP server of this process: start, watch, stop; status for /mcp; one toolset (the pool
    behind it: :class:`~tui.agent.mcp.pool.ServerPool`)."""

    def __init__(self, configs: Sequence[McpServerConfig], *, workdir: Path, log_dir: Path,
                 notices: Sequence[str] = (), environ: Mapping[str, str] | None = None,
                 health_interval: float = HEALTH_INTERVAL) -> None:
        """``log_dir``: where each stdio server's stderr goes (``NAME.log``, rewritten at each start, never through
        a link: see :func:`_open_log`);
        ``notices``: lines to announce on start; ``environ``: where
        ``${VAR}`` and the passed-through variables come from (deep-tui's environment by default)."""
        self.workdir = workdir
        self.log_dir = log_dir
        self.environ = dict(os.environ if environ is None else environ)
        self.health_interval = health_interval
        self.load_stretch: Callable[[], float] = load_stretch
        """How much slower than idle the machine runs (the handshake budget's factor)."""
        self._servers = {config.name: _Server(config) for config in configs}
        self._initial_notices = list(notices)
        self._listeners: list[Callable[[McpNotice], None]] = []
        self._changes: list[Callable[[], None]] = []
        self._stop = asyncio.Event()
        self._started = False
        self.reserved_names: frozenset[str] = frozenset()
        """deep-tui's own tool names: a server's tool with one of them is offered prefixed."""
        self.toolset = McpToolset(self)

    # -- life -------------------------------------------------------------------------------------------

    @property
    def servers(self) -> tuple[McpServerConfig, ...]:
        return tuple(server.config for server in self._servers.values())

    def start(self) -> None:
        """Start every server in the background (once; needs the running event loop). Returns at once."""
        if self._started:
            return
        self._started = True
        self._stop = asyncio.Event()
        for notice in self._initial_notices:
            self._announce(McpNotice(notice, "warning"))
        for server in self._servers.values():
            server.ready = asyncio.Event()
            server.task = asyncio.create_task(self._serve(server), name=f"mcp server {server.config.name}")

    def starting(self) -> tuple[str, ...]:
        """The servers still starting, in configuration order."""
        return tuple(name for name, server in self._servers.items() if self._started and server.status == "starting")

    async def wait_started(self) -> None:
        """Until no server is ``starting`` (each is bounded by its own timeout)."""
        if self._started:
            await asyncio.gather(*(server.ready.wait() for server in self._servers.values()))

    async def aclose(self) -> None:
        """Stop every server (each within :data:`STOP_TIMEOUT`); one still starting is given up on at once."""
        self._stop.set()
        for server in self._servers.values():
            if server.status == "starting" and server.task is not None:
                server.task.cancel()
        tasks = [server.task for server in self._servers.values() if server.task is not None and not server.task.done()]
        if not tasks:
            return
        _done, pending = await asyncio.wait(tasks, timeout=STOP_TIMEOUT + 1)
        for task in pending:
            logger.warning("MCP server task %s did not stop in time: cancelled", task.get_name())
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=STOP_TIMEOUT)

    async def _serve(self, server: _Server) -> None:
        try:
            await self._run_server(server)
        except Exception as error:  # closing a broken connection can fail too: said, never left unretrieved
            logger.warning("MCP server %s: %s while closing", server.config.name, describe_error(error), exc_info=True)
            if server.status in ("starting", "ready"):
                self._fail(server, "stopped", describe_error(error))

    async def _run_server(self, server: _Server) -> None:
        config = server.config
        async with AsyncExitStack() as stack:
            try:
                client = await asyncio.to_thread(importlib.import_module, "tui.agent.mcp.client")  # ~1 s: off the UI
                budget = handshake_budget(config.timeout, self.load_stretch())
                async with asyncio.timeout(budget):
                    toolset = self._build_toolset(client, config, stack, budget)
                    await stack.enter_async_context(toolset)
                    run_context = _tool_listing_context()
                    server.tools = await toolset.get_tools(run_context)
                    server.descriptions = {tool.name: (tool.description or "") for tool in await toolset.list_tools()}
                server.toolset = toolset
            except TimeoutError:
                self._fail(server, "failed to start",
                           f"no answer to the MCP handshake within {budget_words(config.timeout, budget)}"
                           f"{self._stderr_tail(config)}")
                return
            except asyncio.CancelledError:
                self._set(server, "stopped", "deep-tui closed before it started")
                raise
            except Exception as error:
                self._fail(server, "failed to start", f"{describe_error(error)}{self._stderr_tail(config)}")
                return
            self._set(server, "ready")
            logger.info("MCP server %s ready: %d tools", config.name, len(server.tools))
            while not self._stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), self.health_interval)
                if self._stop.is_set() or server.status != "ready":
                    break
                if (problem := await self._problem(server)) is not None:
                    if server.status == "ready":  # not failed meanwhile by a call that found it gone: one notice
                        self._fail(server, "stopped", f"{problem}{self._stderr_tail(config)}")
                    break
            if server.status == "ready":
                self._set(server, "stopped", "deep-tui closed it")
            server.toolset = None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(STOP_TIMEOUT):
                    await stack.aclose()

    async def check(self, server: str) -> str | None:
        """Why the server named ``server`` no longer answers, or ``None`` when it does."""
        found = self._servers.get(server)
        return "not configured" if found is None else await self._problem(found)

    async def call(self, tool: PoolTool, args: dict[str, Any], ctx: RunContext[Any]) -> Any:
        """Call ``tool`` on its server through pydantic-ai's client for it."""
        toolset = self._servers[tool.server].toolset
        if toolset is None:
            raise ToolFailed(f"{tool.name} is not available: MCP server {tool.server} is not running (see /mcp)")
        return await toolset.call_tool(tool.name, args, ctx, tool.tool)

    async def _problem(self, server: _Server) -> str | None:
        toolset = server.toolset
        if toolset is None:
            return "not running"
        try:
            async with asyncio.timeout(PING_TIMEOUT):
                await toolset.client.ping()
        except TimeoutError:
            return f"no answer to a ping within {PING_TIMEOUT:g} s"
        except Exception as error:
            if getattr(error, "code", None) == _METHOD_NOT_FOUND:
                return None  # it answered: a server on a protocol version without ping is alive
            return describe_error(error)
        return None

    def _build_toolset(self, client: Any, config: McpServerConfig, stack: AsyncExitStack, budget: float) -> Any:
        """``client``: :mod:`tui.agent.mcp.client` (imported in a thread: fastmcp is a large import)."""
        stderr: TextIO | None = None
        if config.transport == "stdio":
            stderr = stack.enter_context(_open_log(self.log_dir / f"{config.name}.log"))
        return client.build_mcp_toolset(config, workdir=self.workdir, environ=self.environ, stderr=stderr,
                                        passed=PASSED_ENVIRONMENT, handshake_timeout=budget)

    def _stderr_tail(self, config: McpServerConfig) -> str:
        """`` (<the last line the server wrote on stderr>)`` (from its log), or nothing."""
        if config.transport != "stdio":
            return ""
        try:
            with os.fdopen(open_file(self.log_dir / f"{config.name}.log", os.O_RDONLY), "rb") as handle:
                handle.seek(max(0, os.fstat(handle.fileno()).st_size - 4096))
                lines = [line.strip() for line in handle.read().decode("utf-8", "replace").splitlines() if line.strip()]
        except OSError:
            return ""
        return f" ({_cut(lines[-1])})" if lines else ""

    # -- state --------------------------------------------------------------------------------------------

    def _fail(self, server: _Server, what: str, reason: str) -> None:
        """``what``: ``failed to start`` or ``stopped`` (it had been ready)."""
        server.toolset = None
        server.tools = {}
        self._set(server, "failed", f"{what}: {reason}" if what == "stopped" else reason)
        self._announce(McpNotice(f"MCP server {server.config.name} {what}: {_cut(reason)}; its tools are not available",
                                 "error"))

    def _set(self, server: _Server, status: McpStatus, reason: str = "") -> None:
        logger.info("MCP server %s: %s %s", server.config.name, status, reason)
        server.status = status
        server.reason = _cut(reason)
        if status != "starting":
            server.ready.set()
        for change in list(self._changes):
            change()

    def mark_dead(self, server_name: str, problem: str) -> None:
        """A call found the server gone: fail it now (its watcher would, at its next ping)."""
        server = self._servers.get(server_name)
        if server is not None and server.status == "ready":
            self._fail(server, "stopped", f"{problem}{self._stderr_tail(server.config)}")

    def _announce(self, notice: McpNotice) -> None:
        # A listener shows it to the user (the app's notification, run's stderr line): the log need not repeat it there.
        logger.log(logging.INFO if self._listeners else logging.WARNING, "%s", notice.message)
        for listener in list(self._listeners):
            listener(notice)

    def listen(self, listener: Callable[[McpNotice], None]) -> Callable[[], None]:
        """``listener`` hears every notice from now on; returns the way to stop listening."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def on_change(self, callback: Callable[[], None]) -> Callable[[], None]:
        """``callback`` runs after any server's status changes (the /mcp panel redraws)."""
        self._changes.append(callback)
        return lambda: self._changes.remove(callback) if callback in self._changes else None

    def views(self) -> list[McpServerView]:
        """Every server, in configuration order, with its status and (when ready) its tools."""
        names = self._exposed_names()
        views: list[McpServerView] = []
        for server in self._servers.values():
            config = server.config
            tools = tuple(McpToolInfo(name, names.get((config.name, name), name),
                                      _first_line(server.descriptions.get(name, "")))
                          for name in server.tools)
            views.append(McpServerView(config.name, config.transport, config.target, config.source, server.status,
                                       server.reason, tools))
        return views

    # -- tools ----------------------------------------------------------------------------------------------

    def _exposed_names(self) -> dict[tuple[str, str], str]:
        """(server, tool) → the name the model sees: the tool's own, or ``server_tool`` where it clashes."""
        ready = [server for server in self._servers.values() if server.status == "ready"]
        counts: dict[str, int] = {}
        for server in ready:
            for name in server.tools:
                counts[name] = counts.get(name, 0) + 1
        names: dict[tuple[str, str], str] = {}
        for server in ready:
            for name in server.tools:
                if not _TOOL_NAME.match(name):
                    continue  # a name no provider accepts: never offered (logged when listed)
                clash = name in self.reserved_names or counts[name] > 1
                names[(server.config.name, name)] = f"{server.config.name}_{name}" if clash else name
        return names

    def current_tools(self) -> dict[str, PoolTool]:
        """The name the model sees → the tool behind it, for the ready servers."""
        taken = set(self.reserved_names)
        tools: dict[str, PoolTool] = {}
        for (server_name, tool), exposed in self._exposed_names().items():
            if exposed in taken:
                logger.warning("MCP server %s: tool %s left out: its name %s is taken", server_name, tool, exposed)
                continue
            taken.add(exposed)
            tools[exposed] = PoolTool(server_name, tool, self._servers[server_name].tools[tool])
        return tools

    def tool_definitions(self) -> list[ToolDefinition]:
        """The definitions the model is offered now (for /context's count of tool schemas)."""
        return [dataclasses.replace(offered.tool.tool_def, name=exposed)
                for exposed, offered in self.current_tools().items()]

    def route(self, exposed: str) -> McpRoute | None:
        """The server and tool behind a name the model used (``None``: not an MCP tool)."""
        found = self.current_tools().get(exposed)
        return McpRoute(found.server, found.name) if found else None


def mcp_servers_for(settings: Settings, *, workdir: Path, data_dir: DataDir,
                    project_servers: Sequence[McpServerConfig] = (), notices: Sequence[str] = ()) -> McpServers | None:
    """The user's servers, then ``project_servers`` (a trusted project's ``.mcp.json``, as the trust code read
    it; a name the user configured keeps the user's server); ``notices`` are announced when they start;
    ``None`` when there is nothing to start or say."""
    configs = list(settings.mcp.servers)
    names = {config.name for config in configs}
    for config in project_servers:
        if config.name in names:
            logger.info("MCP server %s of .mcp.json left out: the user's config has a server of that name", config.name)
            continue
        configs.append(config)
    if not configs and not notices:
        return None
    return McpServers(configs, workdir=workdir, log_dir=data_dir.mcp_logs_dir, notices=notices)


def _tool_listing_context() -> RunContext[Any]:
    """A run context for listing a server's tools outside any run (it only reads ``max_retries``)."""
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    return RunContext(deps=None, model=TestModel(), usage=RunUsage(), max_retries=1)


def _first_line(text: str) -> str:
    stripped = text.strip()
    return _cut(stripped.splitlines()[0]) if stripped else ""


def _cut(text: str) -> str:
    text = visible(text)
    return text if len(text) <= _REASON_LIMIT else text[: _REASON_LIMIT - 1] + "…"


def _open_log(path: Path) -> TextIO:
    """The server's stderr log, rewritten at each start. No link is followed on the way (``mcp-logs`` or the log
    planted as a link by a cloned repository's ``.deep-tui``): then the server's stderr is discarded, and the
    link is said once when the session opens (:func:`tui.store.data_links.planted_links`)."""
    try:
        descriptor = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600, make_parents=True)
    except LinkRefusedError as refusal:
        logger.info("%s: the MCP server's stderr is discarded (said when the session opened)", refusal)
        return open(os.devnull, "w", encoding="utf-8")  # closed by the caller's exit stack
    return os.fdopen(descriptor, "w", encoding="utf-8", errors="replace")

