"""``pre_tool`` and ``post_tool`` hooks as a capability: before a call (after its approval) each matching
``pre_tool`` hook runs; one that exits 2 denies the call, its stderr the reason the model reads. After the call each
matching ``post_tool`` hook runs. A hook that fails, hangs or floods is a notice, never a stuck turn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext, ToolFailed
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import ToolDefinition

from tui.agent.hooks.hook_process import MAX_HOOK_OUTPUT
from tui.agent.hooks.hook_runner import HookRunner

MAX_EVENT_RESULT_CHARS = 8_000
"""A post_tool event carries at most this much of the tool's result."""


@dataclass
class HookCapability(AbstractCapability[None]):
    """Runs the configured tool hooks through ``runner``; ``agent_name``: the subagent whose call it is (``None``:
    the session's own agent), told to the hook as ``"subagent"``."""

    runner: HookRunner
    agent_name: str | None = None

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def _event(self, call: ToolCallPart, args: dict[str, object]) -> dict[str, Any]:
        event: dict[str, Any] = {"tool_name": call.tool_name, "tool_call_id": call.tool_call_id, "arguments": args}
        if self.agent_name is not None:
            event["subagent"] = self.agent_name
        return event

    async def before_tool_execute(self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition,
                                  args: dict[str, object]) -> dict[str, object]:
        specs = self.runner.matching("pre_tool", call.tool_name)
        if not specs:
            return args
        for result in await self.runner.run("pre_tool", specs, self._event(call, args)):
            if result.denies:
                reason = result.stderr.strip()[:MAX_HOOK_OUTPUT] or "no reason given"
                raise ToolFailed(f"denied by a pre_tool hook ({result.spec.command}): {reason}")
        return args

    async def after_tool_execute(self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition,
                                 args: dict[str, object], result: Any) -> Any:
        specs = self.runner.matching("post_tool", call.tool_name)
        if specs:
            text = str(result)
            event = {**self._event(call, args), "result": text[:MAX_EVENT_RESULT_CHARS], "result_chars": len(text)}
            await self.runner.run("post_tool", specs, event)
        return result
