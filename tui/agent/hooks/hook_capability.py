"""``pre_tool`` and ``post_tool`` hooks as a capability: before a call (after its approval) each matching
``pre_tool`` hook runs; one that exits 2 denies the call, its stderr the reason the model reads. After the call each
matching ``post_tool`` hook runs. A hook that fails, hangs or floods is a notice (``warn``), never a stuck turn."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext, ToolFailed
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import ToolDefinition

from tui.agent.hooks.hook_process import MAX_HOOK_OUTPUT, HookResult, run_hook
from tui.base.hooks_config import HookSettings, HookSpec
from tui.text.terminal_text import visible

logger = logging.getLogger(__name__)

MAX_EVENT_RESULT_CHARS = 8_000
"""A post_tool event carries at most this much of the tool's result."""


@dataclass
class HookCapability(AbstractCapability[None]):
    """Runs the configured tool hooks. ``launch``: a hook command → the argv that runs it (through the sandbox
    when commands are sandboxed) and its environment; ``warn``: where a notice goes."""

    hooks: HookSettings
    launch: Callable[[str], tuple[Sequence[str], dict[str, str] | None]]
    warn: Callable[[str], None]
    session_id: str = ""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def _run(self, specs: Sequence[HookSpec], event: dict[str, Any]) -> list[HookResult]:
        results = []
        for spec in specs:
            argv, env = self.launch(spec.command)
            result = await run_hook(spec, event, argv, env)
            if result.notice:
                logger.warning("%s", result.notice)
                self.warn(visible(result.notice))
            results.append(result)
        return results

    async def before_tool_execute(self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition,
                                  args: dict[str, object]) -> dict[str, object]:
        specs = [spec for spec in self.hooks.pre_tool if spec.matches(call.tool_name)]
        if not specs:
            return args
        event = {"event": "pre_tool", "session_id": self.session_id, "tool_name": call.tool_name,
                 "tool_call_id": call.tool_call_id, "arguments": args}
        for result in await self._run(specs, event):
            if result.denies:
                reason = result.stderr.strip()[:MAX_HOOK_OUTPUT] or "no reason given"
                raise ToolFailed(f"denied by a pre_tool hook ({result.spec.command}): {reason}")
        return args

    async def after_tool_execute(self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition,
                                 args: dict[str, object], result: Any) -> Any:
        specs = [spec for spec in self.hooks.post_tool if spec.matches(call.tool_name)]
        if specs:
            text = str(result)
            event = {"event": "post_tool", "session_id": self.session_id, "tool_name": call.tool_name,
                     "tool_call_id": call.tool_call_id, "arguments": args,
                     "result": text[:MAX_EVENT_RESULT_CHARS], "result_chars": len(text)}
            await self._run(specs, event)
        return result
