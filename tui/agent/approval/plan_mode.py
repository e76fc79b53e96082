"""Plan mode: every tool that may change something is refused before it runs, with an error the model reads.

:class:`ModeGuard` is a capability holding the session's mode. In *plan* mode its ``before_tool_execute``
hook raises ``ToolFailed`` for a tool marked as changing something (file writes and edits, shell commands,
MEMORY.md changes, MCP tools their server did not mark read-only: :func:`~tui.agent.tools.kinds.changes_something`),
so the call is recorded as a failed tool return telling the model it is in plan mode. The hook runs before
the approval gate's toolset defers the call, so the user is never asked about a call that would be refused.
Reads, listings, searches, the memory reads and the todo tools still run. The prompt's ``!command`` is refused
by the session itself (:meth:`tui.agent.session.runtime.SessionRuntime.run_user_command`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext, ToolFailed
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import ToolDefinition

from tui.agent.tools.kinds import changes_something

logger = logging.getLogger(__name__)

PLAN_MODE_REFUSAL = ("plan mode: {tool} was not run. The session is in plan mode, where nothing may be changed "
                     "(no file writes or edits, no shell commands, no MCP tools that change something). Read and "
                     "search what you need, keep the plan in write_todos, and end your turn with the plan; the "
                     "user leaves plan mode when it is ready.")
USER_COMMAND_REFUSAL = "plan mode: !commands do not run while the session plans (Shift+Tab or --mode to leave it)"


@dataclass
class ModeGuard(AbstractCapability[None]):
    """The session's mode as the tools see it (``default``, ``accept-writes`` or ``plan``); changed in place."""

    mode: str = "default"
    refused: int = 0
    """Calls refused because of plan mode (``run`` reports the count)."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    @property
    def planning(self) -> bool:
        return self.mode == "plan"

    def refusal(self, tool_def: ToolDefinition) -> str | None:
        """Why ``tool_def`` may not run now (``None``: it may)."""
        if self.planning and changes_something(tool_def):
            return PLAN_MODE_REFUSAL.format(tool=tool_def.name)
        return None

    async def before_tool_execute(self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition,
                                  args: dict[str, Any]) -> dict[str, Any]:
        message = self.refusal(tool_def)
        if message is not None:
            self.refused += 1
            logger.info("plan mode: refused %s", tool_def.name)
            raise ToolFailed(message)
        return args
