"""Every tool call has a wall-clock cap: ``[tools] timeout`` seconds, then the model reads why it stopped.

:class:`ToolTimeLimit` wraps each tool's execution (after any approval: the user's thinking time does not
count) in a :class:`~tui.agent.tools.deadline.ToolDeadline`. Blocking work checks the deadline and returns
what it found so far or stops; async work is cancelled a moment after the cap. Either way the call ends as a
failed tool result (``ToolFailed``, which does not use up the run's retries) and the turn goes on.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext, ToolFailed
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.capabilities.abstract import WrapToolExecuteHandler
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import ToolDefinition

from tui.agent.tools.deadline import STOP_GRACE, ToolDeadline, ToolStopped, deadline_scope
from tui.agent.tools.kinds import delegates

logger = logging.getLogger(__name__)

DEFAULT_TOOL_TIMEOUT = 120.0
"""Seconds one tool call may run by default (``[tools] timeout``)."""


@dataclass
class ToolTimeLimit(AbstractCapability[None]):
    """Runs each tool call under a fresh deadline of ``seconds`` (``None``: cancellation only, no cap)."""

    seconds: float | None = DEFAULT_TOOL_TIMEOUT

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def wrap_tool_execute(self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition,
                                args: dict[str, Any], handler: WrapToolExecuteHandler) -> Any:
        if delegates(tool_def):  # a subagent: each of its own tool calls has the limit, the whole task has none
            return await handler(args)
        deadline = ToolDeadline(self.seconds)
        # Work that checks the deadline stops at the cap by itself (often with a partial answer); the grace
        # is for that answer to arrive before async work that does not check is cancelled.
        backstop = None if self.seconds is None else self.seconds + STOP_GRACE
        with deadline_scope(deadline):
            try:
                async with asyncio.timeout(backstop):
                    return await handler(args)
            except TimeoutError as error:
                if not deadline.expired:
                    raise  # the tool's own timeout (a network call inside it), not the cap: the tool reports it
                deadline.cancel()
                logger.info("tool %s stopped at its time limit of %g s", call.tool_name, self.seconds)
                raise ToolFailed(f"{call.tool_name} {deadline.timeout_message()}") from error
            except ToolStopped as stopped:
                if stopped.reason == "cancelled":
                    raise
                logger.info("tool %s stopped at its time limit of %g s", call.tool_name, self.seconds)
                raise ToolFailed(f"{call.tool_name} {stopped}") from None
