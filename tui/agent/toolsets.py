"""Everything the agent is given: the workspace, file, memory and history tools (the chain adds its own capabilities)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic_ai import FunctionToolset
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.messages import ModelMessage

from tui.agent.file_tools import file_toolset
from tui.agent.history_search import history_toolset
from tui.agent.memory import MemoryFile, memory_toolset
from tui.agent.path_policy import PathPolicy
from tui.paths import DataDir


@dataclass
class AgentParts:
    toolsets: list[FunctionToolset[None]]
    capabilities: list[AbstractCapability[None]] = field(default_factory=list)


def build_agent_parts(*, workdir: Path, data_dir: DataDir, memory: MemoryFile,
                      load_messages: Callable[[], Sequence[ModelMessage]]) -> AgentParts:
    """The toolsets for one session's agent, and the local workspace its file tools work through."""
    policy = PathPolicy(workdir=workdir, data_root=data_dir.root)
    return AgentParts(
        toolsets=[file_toolset(policy), memory_toolset(memory), history_toolset(load_messages)],
        capabilities=[LocalWorkspace(workdir)],
    )
