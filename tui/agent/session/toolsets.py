"""Everything the agent is given: the workspace, file, memory and history tools (the chain adds its own capabilities)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from pydantic_ai import FunctionToolset
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.toolsets import AbstractToolset

from tui.agent.approval.approval_gate import ApprovalGate
from tui.agent.approval.commands import CommandApprovals, CommandPolicy
from tui.agent.approval.mcp_calls import McpApprovals, McpRoute
from tui.agent.approval.plan_mode import ModeGuard
from tui.agent.approval.writes import WritePolicy
from tui.agent.session.encodable_messages import EncodableResponses
from tui.agent.shell.execute_tool import ShellState, shell_toolset
from tui.agent.shell.sandbox import sandbox_for
from tui.agent.tools.argument_errors import ToolArgumentErrors
from tui.agent.tools.file_tools import file_toolset
from tui.agent.tools.history_search import history_toolset
from tui.agent.tools.kinds import ToolKinds
from tui.agent.tools.memory import MemoryFile, memory_toolset
from tui.agent.tools.path_policy import PathPolicy
from tui.agent.tools.time_limit import DEFAULT_TOOL_TIMEOUT, ToolTimeLimit
from tui.base.mcp_config import McpServerConfig
from tui.base.paths import DataDir, user_config_dir
from tui.store.search.searcher import HistorySearch
from tui.trust.known_dirs import record_data_dir

logger = logging.getLogger(__name__)


@dataclass
class AgentParts:
    toolsets: list[FunctionToolset[None]]
    approval_gate: ApprovalGate
    """Asks before the file tools change anything, or a command runs (it is also in ``capabilities``)."""
    shell: ShellState
    """The ``execute`` tool's sandbox (the prompt's ``!command`` runs there too)."""
    modes: ModeGuard
    """The session's mode as the tools see it (plan mode refuses changes; it is also in ``capabilities``)."""
    capabilities: list[AbstractCapability[None]] = field(default_factory=list)
    extra_toolsets: list[AbstractToolset[None]] = field(default_factory=list)
    """Toolsets whose tools are not known in advance (the MCP servers')."""
    subagent_capabilities: Callable[[str], list[AbstractCapability[None]]] = lambda label: []
    """The capabilities a subagent's agent gets (its label names it in the approval dialogs): the same as the
    session's, with the approval gate's :meth:`~ApprovalGate.for_subagent`."""
    kinds: ToolKinds = field(default_factory=ToolKinds)
    """The names of the own tools that write files, run commands, change MEMORY.md (from their marks)."""


class McpToolSource(Protocol):
    """What the agent needs of the process's MCP servers (:class:`tui.agent.mcp.servers.McpServers`)."""

    toolset: AbstractToolset[Any]
    reserved_names: frozenset[str]
    servers: tuple[McpServerConfig, ...]

    def route(self, exposed: str) -> McpRoute | None: ...


def build_agent_parts(*, workdir: Path, data_dir: DataDir, memory: MemoryFile, session_id: str = "",
                      search: HistorySearch | None = None, turn_start: Callable[[], int] | None = None,
                      writes: WritePolicy = "ask", mcp: McpToolSource | None = None,
                      mcp_default: WritePolicy = "ask", tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT,
                      commands: CommandPolicy = "ask", network: bool = False, sandboxed: bool = True,
                      page_chars: Callable[[], int] | None = None, mode: str = "default",
                      task_tools: FunctionToolset[None] | None = None) -> AgentParts:
    """The toolsets for session ``session_id``'s agent, and the local workspace its file tools work through.

    ``search`` is the process's shared index (a new one over ``data_dir`` when not given); ``turn_start``:
    the first message of the running turn (the history search leaves the turn's own messages out);
    ``writes``: whether file writes ask first, always run or never run; ``commands`` the same for shell
    commands, which run in a sandbox hiding ``data_dir`` and the user config directory (``network``: whether
    they may reach the network; ``sandboxed=False`` only for ``--no-sandbox``); ``mcp``: the MCP servers,
    whose tools ask first as ``mcp_default`` (``[tools] mcp``) and each server's ``approval`` say;
    ``tool_timeout``: seconds one tool call may run (``None``: no cap; Esc still stops it); ``page_chars``: the
    most characters a read_file page may hold now (what the context keeps inline); ``mode``: the session's first
    mode (see :mod:`tui.agent.tasks.modes`); ``task_tools``: the todo tools.
    """
    policy = PathPolicy(workdir=workdir, data_root=data_dir.root)
    try:
        record_data_dir(data_dir.root)  # commands of every later session, wherever, never see this one
    except OSError as error:
        logger.warning("cannot record the data directory %s among the known ones: %s", data_dir.root, error)
    history = history_toolset(search or HistorySearch(data_dir), session_id, turn_start)
    shell = ShellState(sandbox_for(workdir, [data_dir.root, user_config_dir()], network=network, enabled=sandboxed),
                       saved_dir=data_dir.large_results_dir)
    approvals = CommandApprovals(commands, unavailable=shell.sandbox.unavailable)
    modes = ModeGuard(mode)
    gate = ApprovalGate(policy, writes, commands=approvals, sandbox_line=shell.sandbox.describe(), modes=modes)
    toolsets = [file_toolset(policy, page_chars), memory_toolset(memory), history, shell_toolset(shell)]
    if task_tools is not None:
        toolsets.append(task_tools)
    kinds = ToolKinds.of(tool.tool_def for toolset in toolsets for tool in toolset.tools.values())
    gate.command_tools = kinds.command_running
    extra: list[AbstractToolset[None]] = []
    if mcp is not None:
        mcp.reserved_names = frozenset(name for toolset in toolsets for name in toolset.tools)
        per_server = {server.name: cast(WritePolicy, server.approval) for server in mcp.servers if server.approval}
        gate.mcp = McpApprovals(default=mcp_default, per_server=per_server, route=mcp.route)
        extra.append(mcp.toolset)

    def capabilities(approvals: ApprovalGate) -> list[AbstractCapability[None]]:
        return [LocalWorkspace(workdir), EncodableResponses(), modes, approvals, ToolTimeLimit(tool_timeout),
                ToolArgumentErrors()]

    return AgentParts(
        toolsets=toolsets,
        approval_gate=gate,
        shell=shell,
        modes=modes,
        capabilities=capabilities(gate),
        extra_toolsets=extra,
        subagent_capabilities=lambda label: capabilities(gate.for_subagent(label)),
        kinds=kinds,
    )
