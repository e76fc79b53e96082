"""Everything the agent is given: the workspace, file, memory and history tools (the chain adds its own capabilities)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic_ai import FunctionToolset
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace

from tui.agent.command_approval import CommandApprovals, CommandPolicy
from tui.agent.encodable_messages import EncodableResponses
from tui.agent.file_tools import file_toolset
from tui.agent.history_search import history_toolset
from tui.agent.memory import MemoryFile, memory_toolset
from tui.agent.path_policy import PathPolicy
from tui.agent.sandbox import sandbox_for
from tui.agent.shell_tool import ShellState, shell_toolset
from tui.agent.write_approval import WritePolicy
from tui.agent.write_gate import WriteGate
from tui.paths import DataDir, user_config_dir
from tui.store.search import HistorySearch


@dataclass
class AgentParts:
    toolsets: list[FunctionToolset[None]]
    write_gate: WriteGate
    """Asks before the file tools change anything, or a command runs (it is also in ``capabilities``)."""
    shell: ShellState
    """The ``execute`` tool's sandbox (the prompt's ``!command`` runs there too)."""
    capabilities: list[AbstractCapability[None]] = field(default_factory=list)


def build_agent_parts(*, workdir: Path, data_dir: DataDir, memory: MemoryFile, session_id: str = "",
                      search: HistorySearch | None = None, turn_start: Callable[[], int] | None = None,
                      writes: WritePolicy = "ask", commands: CommandPolicy = "ask", network: bool = False,
                      sandboxed: bool = True) -> AgentParts:
    """The toolsets for session ``session_id``'s agent, and the local workspace its file tools work through.

    ``search`` is the process's shared index (a new one over ``data_dir`` when not given); ``turn_start``:
    the first message of the running turn (the history search leaves the turn's own messages out);
    ``writes``: whether file writes ask first, always run or never run; ``commands`` the same for shell
    commands, which run in a sandbox hiding ``data_dir`` and the user config directory (``network``: whether
    they may reach the network; ``sandboxed=False`` only for ``--no-sandbox``).
    """
    policy = PathPolicy(workdir=workdir, data_root=data_dir.root)
    history = history_toolset(search or HistorySearch(data_dir), session_id, turn_start)
    shell = ShellState(sandbox_for(workdir, [data_dir.root, user_config_dir()], network=network, enabled=sandboxed),
                       saved_dir=data_dir.large_results_dir)
    approvals = CommandApprovals(commands, unavailable=shell.sandbox.unavailable)
    gate = WriteGate(policy, writes, commands=approvals, sandbox_line=shell.sandbox.describe())
    return AgentParts(
        toolsets=[file_toolset(policy), memory_toolset(memory), history, shell_toolset(shell)],
        write_gate=gate,
        shell=shell,
        capabilities=[LocalWorkspace(workdir), EncodableResponses(), gate],
    )
