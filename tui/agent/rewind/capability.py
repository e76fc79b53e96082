"""The hook that takes a prompt's snapshot: before the first call that may change the working directory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import ToolDefinition

from tui.agent.approval.mcp_calls import mcp_server_of
from tui.agent.rewind.checkpoints import PromptCheckpoints
from tui.agent.tools.kinds import runs_commands, writes_files


def may_change_files(tool_def: ToolDefinition) -> bool:
    """A file write or edit, a shell command, or an MCP tool (deep-tui cannot know what one does)."""
    return writes_files(tool_def) or runs_commands(tool_def) or mcp_server_of(tool_def) is not None


@dataclass
class RewindCapability(AbstractCapability[None]):
    """Awaits the prompt's snapshot before a changing call runs (after its approval: a denied call changes
    nothing, so it takes no snapshot)."""

    checkpoints: PromptCheckpoints

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def before_tool_execute(self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition,
                                  args: dict[str, object]) -> dict[str, object]:
        if may_change_files(tool_def):
            await self.checkpoints.before_change()
        return args

    async def after_tool_execute(self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition,
                                 args: dict[str, object], result: Any) -> Any:
        if may_change_files(tool_def):
            self.checkpoints.after_change()
        return result
